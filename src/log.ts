import type { Logger } from './host.ts';

/**
 * One JSON line per event, `{ level, time, message, ...fields }`, on
 * stdout (info) or stderr (warn, error); the default when the host gives no
 * logger. The events are listed in docs/operations.md ("Logs").
 */
const line = (level: string, message: string, fields?: Record<string, unknown>) =>
  JSON.stringify({ level, time: new Date().toISOString(), message, ...fields });

export const consoleLogger: Logger = {
  info: (message, fields) => console.log(line('info', message, fields)),
  warn: (message, fields) => console.warn(line('warn', message, fields)),
  error: (message, fields) => console.error(line('error', message, fields)),
};
