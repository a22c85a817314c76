/**
 * The bulk import of a store of oidc-provider's example Redis layout (issue
 * 33): progress reported, the importing process SIGKILLed half-way, run again
 * until it finishes; every record is moved once (none lost, none doubled: a
 * record moved and then consumed here is not brought back from a lagging old
 * copy), while the service answers introspection throughout. Default tier a
 * few thousand records; scale tier (OSN_TEST_SCALE=full) 100,000, whose rate
 * and effect on live introspection docs/upgrading.md gives.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { AdapterPayload } from 'oidc-provider';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { CLIENT } from '../../bench/host.ts';
import { createMinter } from '../../bench/mint.ts';
import { introspect, onceLeaseLapsed as once, refresh, startAdoptHost, type AdoptHost } from '../helpers/adopt-host.ts';
import { previousStore, type PreviousStore } from '../helpers/previous/kinds.ts';
import { dropPrefix, REDIS_URL, testRedis } from '../helpers/redis.ts';
import { scale } from '../helpers/scale.ts';
import { setUp } from '../helpers/set-up.ts';

/** Sign-ins minted before the switch: each a session, a grant and a token (three records). */
const SIGN_INS = scale(1000, 33_334);
const REFRESH = 20;
const CHILD = fileURLToPath(new URL('../helpers/adopt-import-process.ts', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

describe(`the bulk import of ${(SIGN_INS + REFRESH) * 3} records of the example Redis layout, killed half-way and run again`, function () {
  this.timeout(1_800_000);
  let accessTokens: string[] = [];
  let refreshTokens: string[] = [];

  const world = setUp(async () => {
    const redis = testRedis();
    const previous: PreviousStore = await previousStore('example Redis adapter', 'adopt-import', redis);
    const host: AdoptHost = await startAdoptHost({ clients: [CLIENT], before: previous.before, redis, keyPrefix: previous.pluginPrefix });
    const minter = await createMinter(host.provider, Array.from({ length: 50 }, (_, i) => `import-person-${i}`));
    accessTokens = await minter.mint('access', SIGN_INS);
    refreshTokens = await minter.mint('refresh', REFRESH);
    await host.switchToPlugin({ previousAdapter: previous.previousAdapter, adoption: { records: previous.records } });
    const plain = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    return {
      redis, previous, host, plain,
      async close() {
        await host.close();
        await previous.close();
        await dropPrefix(redis, previous.pluginPrefix);
        await redis.quit();
        await plain.quit();
      },
    };
  });

  it('moves every record once, through a SIGKILL, while introspection keeps answering', async () => {
    const { host, previous, plain } = world();
    const plugin = host.plugin!;
    const total = (SIGN_INS + REFRESH) * 3;
    const previousPrefix = previous.redisPrefix!;

    // The service answers throughout. Its latency is measured on tokens moved in already (as every
    // token is once the import is done); every tenth request is any old token, moved or not, and is
    // checked, not timed.
    const live = accessTokens.slice(0, 200);
    for (const token of live) expect(await introspect(host.issuer, CLIENT, token, 'access_token')).to.include({ active: true });
    const latencies = { before: [] as number[], during: [] as number[], again: [] as number[] };
    const wrong: string[] = [];
    const state: { phase: keyof typeof latencies | 'stop' } = { phase: 'before' };
    const serving = (async () => {
      for (let i = 0; state.phase !== 'stop'; i += 1) {
        const any = i % 10 === 9;
        const token = any ? accessTokens[(i * 7919) % accessTokens.length]! : live[i % live.length]!;
        const started = process.hrtime.bigint();
        const answer = await introspect(host.issuer, CLIENT, token, 'access_token');
        const phase = state.phase as keyof typeof latencies | 'stop';
        if (!any && phase !== 'stop') latencies[phase].push(Number(process.hrtime.bigint() - started) / 1e6);
        if (answer.active !== true) wrong.push(token);
        await sleep(5);
      }
    })();
    await sleep(2000);
    state.phase = 'during';

    // First run, in a process of its own: SIGKILLed once it has handled half the records.
    const child = spawn(process.execPath, [CHILD], {
      env: { ...process.env, OSN_PLUGIN_PREFIX: previous.pluginPrefix, OSN_PREVIOUS_PREFIX: previousPrefix, OSN_ISSUER: host.issuer, OSN_CLIENTS: JSON.stringify([CLIENT]) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const reports: { seen: number; total?: number; etaSeconds?: number; perSecond: number }[] = [];
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        reports.push(JSON.parse(out.slice(0, nl)) as (typeof reports)[number]);
        out = out.slice(nl + 1);
        if (reports.at(-1)!.seen >= total / 2 && child.exitCode === null) child.kill('SIGKILL');
      }
    });
    const [, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));
    expect(signal, 'killed half-way').to.equal('SIGKILL');
    expect(reports.at(-1)!.seen).to.be.within(total / 2, total - 1);
    // The listing's size when the run began (the service had moved a few already).
    expect(reports.at(-1)!.total).to.be.within(total / 2, total);
    expect(reports.at(-1)!.etaSeconds).to.be.a('number');
    const killedAt = await plugin.adoption!.status();
    expect(killedAt.import?.finishedAt).to.equal(undefined);

    // A refresh token moved and consumed here, its old copy back in the previous store (a lagging replica).
    const lagging = refreshTokens[0]!;
    const old = await new (previous.before as new (m: string) => { find(id: string): Promise<AdapterPayload | undefined> })('RefreshToken').find(lagging);
    const successor = await refresh(host.issuer, CLIENT, lagging);
    expect(successor.status).to.equal(200);
    await plain.hset(`${previousPrefix}RefreshToken:${lagging}`, 'payload', JSON.stringify(old));
    await plain.expire(`${previousPrefix}RefreshToken:${lagging}`, 600);

    // Run again, in the service's own process this time: it resumes where the first run recorded its last page,
    // once the killed run's lease has lapsed (one run at a time per store).
    state.phase = 'again';
    let done = await once(() => plugin.adoption!.importRecords());
    // A record whose move timed out on a busy store (the previous store's calls are bounded) counts failed and
    // leaves the run unfinished: the operator runs it again (docs/upgrading.md, exit 5). So does the test, at most
    // three more times, and says so; the final run must move the rest with nothing failed.
    const unfinished: number[] = [];
    while (done.failed > 0 && unfinished.length < 3) {
      unfinished.push(done.failed);
      done = await plugin.adoption!.importRecords();
    }
    state.phase = 'stop';
    await serving;
    expect(done).to.include({ failed: 0, expired: 0, refused: 0 });
    expect(done.finishedAt).to.be.a('number');
    expect(wrong, 'every introspection answered active').to.deep.equal([]);

    // None lost: every record is in the plugin's store; none left in the previous store.
    const keys = adapterKeys(previous.pluginPrefix);
    // In pages of 500: 33,334 reads at once (the scale tier) outran the store's command timeout.
    const missing: string[] = [];
    for (let i = 0; i < accessTokens.length; i += 500) {
      const page = accessTokens.slice(i, i + 500);
      const found = await Promise.all(page.map(async (t) => (await plugin.store.hmget(keys.record('AccessToken', t), ['p']))[0]));
      page.forEach((t, j) => { if (found[j] === null) missing.push(t); });
    }
    expect(missing).to.deep.equal([]);
    const left: string[] = [];
    for await (const batch of plain.scanStream({ match: `${previousPrefix}*`, count: 1000 })) {
      for (const key of batch as string[]) if (/^(Session|Grant|AccessToken|RefreshToken):/.test(key.slice(previousPrefix.length))) left.push(key);
    }
    // The lagging copy may stay where the resumed run had passed already: its moved mark keeps it out.
    expect(left.filter((key) => key !== `${previousPrefix}RefreshToken:${lagging}`).slice(0, 5), `${left.length} left`).to.deep.equal([]);
    // None doubled: the lagging copy did not bring the consumed refresh token back (once its successor was used, it is theft).
    expect((await plugin.store.hmget(keys.record('RefreshToken', lagging), ['c']))[0]).to.not.equal(null);
    expect((await refresh(host.issuer, CLIENT, successor.json.refresh_token!)).status).to.equal(200);
    const reused = await refresh(host.issuer, CLIENT, lagging);
    expect({ status: reused.status, error: reused.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
    const moved = Object.values(plugin.adoption!.counts().moved).reduce((a, b) => a + b, 0);
    expect(moved, 'moved in this process (the read-through and the second run)').to.be.below(total);

    const figures = (name: keyof typeof latencies) => {
      const sorted = latencies[name].toSorted((a, b) => a - b);
      return `${name} ${quantile(sorted, 0.5).toFixed(1)}/${quantile(sorted, 0.95).toFixed(1)}/${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length})`;
    };
    console.log(`      import: ${total} records; first run (a process of its own) ${reports.at(-1)!.perSecond} records/s, killed at ${reports.at(-1)!.seen}; second run (in the service's process) ${done.perSecond} records/s${unfinished.length ? ` (run again ${unfinished.length} more time(s) after ${unfinished.join(', ')} failed on the busy store)` : ''}; introspection of moved tokens p50/p95/max: ${figures('before')}, ${figures('during')}, ${figures('again')}`);
  });
});
