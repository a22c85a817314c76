import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The command line of `npx oidc-signout-notify` (docs/operations.md "The
 * operator's command"): its verbs, their options and help, parsed with
 * node:util parseArgs, strictly (an unknown option or a missing argument is
 * a usage error, exit 2, before anything is loaded).
 */

/** What a script tests: the exit codes, in one place (the README and the help say the same). */
export const EXIT = {
  done: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  notConfirmed: 4,
  notFinished: 5,
  importRunning: 6,
} as const;

export const DEFAULT_MODULE = './provider.js';
export const MODULE_ENV = 'OIDC_SIGNOUT_NOTIFY_MODULE';

type Options = NonNullable<ParseArgsConfig['options']>;

const GLOBAL: Options = {
  module: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};
const YES: Options = { yes: { type: 'boolean', short: 'y' } };

interface Verb {
  /** The positional argument it takes, if any. */
  argument?: 'clientId' | 'accountId';
  options: Options;
  summary: string;
  help: string;
}

export const VERBS = {
  import: {
    options: { 'dry-run': { type: 'boolean' }, 'per-second': { type: 'string' }, concurrency: { type: 'string' }, again: { type: 'boolean' }, status: { type: 'boolean' } },
    summary: 'move every record of the previous store into the plugin\'s (docs/upgrading.md)',
    help: `Usage: npx oidc-signout-notify import [--dry-run] [--per-second N] [--concurrency N] [--again] [--status]

Moves every record of the previous store (the plugin's previousAdapter,
listed by adoption.records) into the plugin's store, exactly once, paced,
resumable: run it again after a crash and it goes on where it stopped. When
it finishes, every instance stops looking in the previous store. Progress
goes to stderr, a line a page; the final report to stdout. SIGINT or
SIGTERM stops it after the page in hand (its progress recorded); a second
one ends it at once.

  --dry-run         count what would move (found, expired, gone); write nothing
  --per-second N    records looked up per second at most (default 1000)
  --concurrency N   records moved at once (default 50)
  --again           run again from the start although an earlier run finished
  --status          print the import's recorded progress and the window's state; import nothing

Exit: 0 finished (or the dry run or --status done), 5 not finished (records
failed, or stopped by a signal: run it again), 6 another run is under way.`,
  },
  'end-site-access': {
    argument: 'clientId',
    options: YES,
    summary: 'end a site\'s access for every person (its secret leaked, the site was compromised)',
    help: `Usage: npx oidc-signout-notify end-site-access <clientId> [--yes]

Ends every grant of the site issued up to now, for every person, with every
token of it (introspection active: false, refresh invalid_grant). The site
gets no back-channel logout; people sign in and consent again there. Rotate
the site's secret in your configuration too.

Without --yes it only says what it would do (exit 4). An unknown client id
ends nothing (exit 3).

  -y, --yes   do it`,
  },
  'end-account-access': {
    argument: 'accountId',
    options: YES,
    summary: 'end every grant and service session of one person, at every site (account taken over)',
    help: `Usage: npx oidc-signout-notify end-account-access <accountId> [--yes]

Ends every grant and every service session of the person at once, at every
site: their tokens die with them, each site they had a session at gets
back-channel logout, and their next sign-in anywhere starts afresh.

Without --yes it only shows what the plugin holds of the person (sites,
sessions) and ends nothing (exit 4).

  -y, --yes   do it`,
  },
  'delete-account': {
    argument: 'accountId',
    options: YES,
    summary: 'delete a person: their sites told, every session and grant ended, every key erased',
    help: `Usage: npx oidc-signout-notify delete-account <accountId> [--yes]

plugin.deleteAccount: the person's sites get RISC account-purged and
back-channel logout, every session and grant ends, their queued letters are
dropped, and every key the plugin holds for them is erased (while the
adoption window is open, their records in the previous store first). Safe
to run again. Your own records of the person are yours to erase.

Without --yes it only shows what the plugin holds of the person (sites,
sessions) and deletes nothing (exit 4): check the id first.

  -y, --yes   do it`,
  },
  queues: {
    options: {},
    summary: 'the queues: letters, back-channel logouts, Shared Signals, session expiry',
    help: `Usage: npx oidc-signout-notify queues

For each of the plugin's queues (letters, back-channel logouts, Shared
Signals, the session expiry sweep): jobs waiting, active, delayed (retries
and the schedule) and failed (given up, kept a while), and how long the
oldest waiting job has waited. Read-only.`,
  },
} satisfies Record<string, Verb>;

export type VerbName = keyof typeof VERBS;

export const GLOBAL_HELP = `Usage: npx oidc-signout-notify <command> [options]

The operator's command: the bulk import from your previous adapter, and what
an incident needs, without writing code. It imports your module that builds
the plugin (it exports \`plugin\` and \`provider\`, and \`redis\`: README's
provider.js), starts no worker, serves nothing, and closes what it opened.

Commands:
${Object.entries(VERBS).map(([name, verb]) => `  ${`${name}${'argument' in verb ? ` <${verb.argument}>` : ''}`.padEnd(32)}${verb.summary}`).join('\n')}

Options (every command):
  --module <file>   your module that builds the plugin (default ${DEFAULT_MODULE} in the
                    current directory, or the ${MODULE_ENV} environment variable)
  --json            one JSON document on stdout (progress and logs go to stderr)
  -h, --help        this help, or a command's: npx oidc-signout-notify <command> --help

Exit codes: 0 done; 1 failed (Redis or the previous store unavailable, your
module threw); 2 usage error (or --module not loadable as such); 3 no such
site; 4 not confirmed (a command that ends or deletes, without --yes: it
said what it would do and did nothing); 5 the import did not finish (run it
again); 6 another run of the import is under way.`;

export class UsageError extends Error {}

export type Parsed =
  | { help: string; json: boolean }
  | { verb: VerbName; argument: string | undefined; values: Record<string, string | boolean | undefined>; module: string | undefined; json: boolean };

/** The verb, its argument and options; `help` when asked for (or nothing at all was given). */
export function parseCommandLine(args: string[]): Parsed {
  const json = args.includes('--json');
  // First pass: where the verb is, the global options known (a value of --module is not a verb).
  const first = parseArgs({ args, options: GLOBAL, allowPositionals: true, strict: false });
  const name = first.positionals[0];
  if (name === undefined) {
    if (first.values.help || args.length === 0) return { help: GLOBAL_HELP, json };
    throw new UsageError('no command given');
  }
  if (!Object.hasOwn(VERBS, name)) throw new UsageError(`unknown command "${name}"`);
  const verb = VERBS[name as VerbName] as Verb;
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...GLOBAL, ...verb.options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) return { help: verb.help, json };
  const rest = parsed.positionals.slice(1);
  if (verb.argument && rest.length === 0) throw new UsageError(`${name} needs the ${verb.argument}`);
  if (rest.length > (verb.argument ? 1 : 0)) throw new UsageError(`${name}: unexpected argument "${rest[verb.argument ? 1 : 0]}"`);
  if (verb.argument && rest[0] === '') throw new UsageError(`${name}: the ${verb.argument} is empty`);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (name === 'import') {
    positive(values, 'per-second', false);
    positive(values, 'concurrency', true);
  }
  return { verb: name as VerbName, argument: rest[0], values, module: values.module as string | undefined, json };
}

/** A positive number (`--per-second`), or a positive whole number (`--concurrency`), or undefined when not given. */
export function positive(values: Record<string, string | boolean | undefined>, name: string, whole: boolean): number | undefined {
  const given = values[name];
  if (given === undefined) return undefined;
  const value = Number(given);
  if (typeof given !== 'string' || given.trim() === '' || !(value > 0) || !Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be a positive ${whole ? 'whole ' : ''}number, not "${String(given)}"`);
  }
  return value;
}
