/**
 * The store's atomic steps. Each pairs `lua/<name>.lua` with its in-process
 * twin for the embedded store; see the Lua file's header for KEYS and ARGV.
 * Grouped by what they serve (./commands/); one import for callers.
 */
export * from './commands/records.ts';
export * from './commands/sites.ts';
export * from './commands/notify.ts';
export * from './commands/generic.ts';
export * from './commands/expiry.ts';
