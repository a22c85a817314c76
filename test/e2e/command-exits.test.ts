/**
 * The operator's command's other exit codes, run from the sources as a
 * process (`node src/command/main.ts`; the consumer test runs every command
 * from the tarball): 1 when Redis cannot be reached or the module throws, 2
 * for a module that is not one the command can use, 5 for an import that did
 * not finish (records failed, or SIGINT after the page in hand), 6 for an
 * import while another holds the lease. Each with its JSON document.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { Redis } from 'ioredis';

import { exampleRedisAdapter } from '../../src/adoption.ts';
import { freePort } from '../helpers/net.ts';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.ts';

const MAIN = fileURLToPath(new URL('../../src/command/main.ts', import.meta.url));
const MODULE = fileURLToPath(new URL('../helpers/command-host.ts', import.meta.url));

interface Ran { code: number | null; json: Record<string, unknown> | undefined; stderr: string; ms: number }

function command(args: string[], env: Record<string, string>, opts: { interruptWhen?: RegExp } = {}): Promise<Ran> {
  const started = Date.now();
  const child = spawn(process.execPath, [MAIN, ...args, '--json', '--module', MODULE], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (opts.interruptWhen?.test(stderr)) {
      opts.interruptWhen = undefined;
      child.kill('SIGINT');
    }
  });
  return new Promise((resolve) => child.on('close', (code) => {
    let json: Record<string, unknown> | undefined;
    try { json = JSON.parse(stdout) as Record<string, unknown>; } catch { json = undefined; }
    resolve({ code, json, stderr, ms: Date.now() - started });
  }));
}

describe('the operator\'s command: exit codes 1, 2, 5 and 6', function () {
  this.timeout(60_000);
  const prefix = uniquePrefix('command');
  const previousPrefix = uniquePrefix('command-previous');
  const interrupted = uniquePrefix('command-interrupted');
  const interruptedPrevious = uniquePrefix('command-interrupted-previous');
  const env = { OSN_CMD_REDIS: REDIS_URL, OSN_CMD_PREFIX: prefix, OSN_CMD_PREVIOUS: previousPrefix };
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  // The interrupted import's previous store: a database of its own, so that its
  // listing holds its 30 records only. On the shared keyspace a SCAN of 5 keys a
  // page walked thousands of other tests' keys before the first record (seen 0
  // for the whole timeout on a busy run).
  const ownDbUrl = (() => { const url = new URL(REDIS_URL); url.pathname = '/15'; return url.toString(); })();
  const ownDb = new Redis(ownDbUrl, { maxRetriesPerRequest: 2 });

  /** 30 interactions in a previous store (records the import moves without a site or a person). */
  async function previousRecords(client: Redis, under: string) {
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const adapter = exampleRedisAdapter(client, { prefix: under })('Interaction');
    for (let i = 0; i < 30; i += 1) await adapter.upsert(`command-${i}`, { kind: 'Interaction', jti: `command-${i}`, exp, iat: exp - 3600 } as never, 3600);
  }
  before(() => previousRecords(redis, previousPrefix));
  after(async () => {
    await dropPrefix(redis, interrupted);
    await dropPrefix(ownDb, interruptedPrevious);
    await ownDb.quit();
    await dropPrefix(redis, prefix);
    await dropPrefix(redis, previousPrefix);
    await redis.quit();
  });

  it('1: Redis cannot be reached: { error: "unavailable" }, within seconds', async () => {
    const port = await freePort();
    const ran = await command(['queues'], { ...env, OSN_CMD_REDIS: `redis://127.0.0.1:${port}` });
    expect([ran.code, ran.json], ran.stderr).to.deep.equal([1, {
      error: 'unavailable',
      error_description: `the service cannot reach its data store right now; try again shortly (redis: no connection within 5 s (connect ECONNREFUSED 127.0.0.1:${port}))`,
    }]);
    expect(ran.ms).to.be.below(15_000);
  });

  it('1: the module throws while loading: { error: "failed" } naming it, no stack', async () => {
    const ran = await command(['queues'], { ...env, OSN_CMD_CASE: 'throws' });
    expect([ran.code, ran.json]).to.deep.equal([1, { error: 'failed', error_description: `${MODULE} failed to load: the host module could not read its settings` }]);
  });

  it('2: a module that exports no plugin, or a plugin on the embedded store', async () => {
    const none = await command(['queues'], { ...env, OSN_CMD_CASE: 'no-plugin' });
    expect([none.code, none.json]).to.deep.equal([2, { error: 'usage', error_description: `${MODULE} exports no \`plugin\` (what createSignoutNotify returned): export it, as README's provider.js does (npx oidc-signout-notify --help)` }]);
    // What that module opened and did not export stays open: the command says so and ends the process.
    expect(none.stderr).to.include('something your module opened is still open');
    const embedded = await command(['queues'], { ...env, OSN_CMD_CASE: 'embedded' });
    expect([embedded.code, embedded.json]).to.deep.equal([2, { error: 'usage', error_description: `the plugin ${MODULE} builds keeps its data in that process (the embedded store, no redis option): the command works on a plugin on Redis (npx oidc-signout-notify --help)` }]);
  });

  it('6: another run of the import holds the lease: { error: "import_running" }, nothing written', async () => {
    await redis.set(`${prefix}{adopt}:import:lease`, 'another-run', 'PX', 20_000);
    try {
      const ran = await command(['import'], env);
      expect(ran.code).to.equal(6);
      expect(ran.json).to.deep.equal({ error: 'import_running', error_description: ran.json?.error_description, heldForMs: ran.json?.heldForMs });
      expect(ran.json!.heldForMs).to.be.within(1, 20_000);
      expect(await redis.exists(`${prefix}{adopt}:import`)).to.equal(0);
    } finally {
      await redis.del(`${prefix}{adopt}:import:lease`);
    }
  });

  it('5: the previous store fails: every record counted failed, not finished; run again, it finishes (0) and counts the listing once', async () => {
    const ran = await command(['import'], { ...env, OSN_CMD_CASE: 'previous-down' });
    expect([ran.code, ran.json?.finished, (ran.json?.progress as { failed: number; seen: number }).failed], ran.stderr).to.deep.equal([5, false, 30]);
    // Run again once the store answers: it walks the listing afresh and counts it once (not 60 seen, not 30 failed).
    const again = await command(['import'], env);
    expect([again.code, again.json?.finished], again.stderr).to.deep.equal([0, true]);
    expect(again.json!.progress).to.deep.include({ seen: 30, moved: 30, failed: 0, total: 30 });
  });

  it('5: SIGINT stops the import after the page in hand, its progress recorded; run again, it finishes (0)', async () => {
    // Stores of its own: the import above recorded its failed run under `prefix`, and the previous copies
    // of what it moved are gone (removed once moved), so this import would find nothing to interrupt.
    await previousRecords(ownDb, interruptedPrevious);
    const own = { ...env, OSN_CMD_PREFIX: interrupted, OSN_CMD_PREVIOUS: interruptedPrevious, OSN_CMD_PREVIOUS_REDIS: ownDbUrl };
    const stopped = await command(['import', '--per-second', '10'], { ...own, OSN_CMD_PAGE: '5' }, { interruptWhen: /"seen":[1-9]/ });
    expect([stopped.code, stopped.json?.finished], stopped.stderr).to.deep.equal([5, false]);
    expect(stopped.stderr).to.include('{"stopping":"SIGINT"}');
    const seen = (stopped.json!.progress as { seen: number }).seen;
    expect(seen).to.be.within(1, 29);
    const again = await command(['import', '--per-second', '1000'], own);
    expect([again.code, again.json?.finished], again.stderr).to.deep.equal([0, true]);
    expect((again.json!.progress as { moved: number; alreadyMoved: number }).moved + (again.json!.progress as { alreadyMoved: number }).alreadyMoved).to.be.at.least(30 - seen);
  });
});
