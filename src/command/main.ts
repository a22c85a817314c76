#!/usr/bin/env node
/**
 * `npx oidc-signout-notify <command>`: the package's `bin` (docs/operations.md
 * "The operator's command"). Only the result goes to stdout: everything else
 * this process prints (the host module's logs, the plugin's default logger)
 * is sent to stderr.
 */
import { runCommand } from './run.ts';

const toStdout = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

const code = await runCommand(process.argv.slice(2), {
  out: (text) => { toStdout(text); },
  err: (text) => { process.stderr.write(text); },
}, process.env, process.cwd());
process.exitCode = code;

// Everything the command opened is closed; what keeps the process alive now is the module's own (a pool, a timer).
setTimeout(() => {
  process.stderr.write('oidc-signout-notify: something your module opened is still open (export a `close` function that closes it); ending the process\n');
  process.exit(code);
}, 5000).unref();
