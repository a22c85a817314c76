import { StoreUnavailableError } from '../store/availability.ts';
import { EXIT, parseCommandLine, UsageError, type Parsed } from './args.ts';
import { deleteAccountCommand, endAccountAccessCommand, endSiteAccessCommand } from './access.ts';
import { loadHostModule, ModuleError, type HostModule } from './host-module.ts';
import { importCommand } from './import.ts';
import { output, type Io, type Output } from './output.ts';
import { queuesCommand } from './queues.ts';

/** A failure as the exit code and the words a script and a person get (the message only: no stack, no payload). */
function failed(out: Output, err: unknown): number {
  if (err instanceof UsageError) {
    out.error('usage', `${err.message} (npx oidc-signout-notify --help)`);
    return EXIT.usage;
  }
  if (err instanceof StoreUnavailableError) {
    out.error('unavailable', `${err.error_description} (${err.error_detail})`);
    return EXIT.failed;
  }
  out.error('failed', err instanceof ModuleError || err instanceof Error ? err.message : String(err));
  return EXIT.failed;
}

async function runVerb(parsed: Extract<Parsed, { verb: string }>, host: HostModule, out: Output): Promise<number> {
  const yes = parsed.values.yes === true;
  switch (parsed.verb) {
    case 'import': return importCommand(host, parsed.values, out);
    case 'end-site-access': return endSiteAccessCommand(host, parsed.argument!, yes, out);
    case 'end-account-access': return endAccountAccessCommand(host, parsed.argument!, yes, out);
    case 'delete-account': return deleteAccountCommand(host, parsed.argument!, yes, out);
    case 'queues': return queuesCommand(host, out);
  }
}

/**
 * `npx oidc-signout-notify <command> ...`: parses the command line, loads the
 * host's module, runs the verb and closes what was opened. Resolves with the
 * exit code (args.ts EXIT).
 */
export async function runCommand(args: string[], io: Io, env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseCommandLine(args);
  } catch (err) {
    return failed(output(args.includes('--json'), io), err);
  }
  const out = output(parsed.json, io);
  if ('help' in parsed) {
    out.result({ help: parsed.help }, parsed.help);
    return EXIT.done;
  }
  let host: HostModule;
  try {
    host = await loadHostModule(parsed.module, env, cwd);
  } catch (err) {
    return failed(out, err);
  }
  try {
    return await runVerb(parsed, host, out);
  } catch (err) {
    return failed(out, err);
  } finally {
    await host.close().catch((err: Error) => io.err(`oidc-signout-notify: closing: ${err.message}\n`));
  }
}
