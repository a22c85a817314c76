/**
 * A previous store that fails or does not answer (issue 33): a lookup there
 * answers 503 temporarily_unavailable at once (within redisTimeoutMs), as
 * when the plugin's own Redis is gone, never "not found" (a site would drop
 * a live refresh token) and never a hang.
 */
import { expect } from 'chai';
import type { Adapter } from 'oidc-provider';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { createSignoutNotify } from '../../src/index.ts';
import { exampleRedisHost } from '../helpers/adopt-host.ts';
import { hostRedisAdapter, listedInteractions } from '../helpers/previous/example-redis.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { siteClient } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

const site = siteClient('adopt-down');
const basic = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;

for (const [name, broken] of [
  ['fails', () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6390'))],
  ['does not answer', () => new Promise(() => {})],
] as const) {
  describe(`a previous store that ${name}`, function () {
    this.timeout(30_000);
    const world = setUp(async () => {
      const made = await exampleRedisHost('adopt-down', [site]);
      const down = (model: string): Adapter => Object.assign(new made.before.Adapter(model), { find: broken, findByUid: broken, findByUserCode: broken });
      await made.host.switchToPlugin({ previousAdapter: down, redisTimeoutMs: 300 });
      return made;
    });

    it('answers a lookup 503 temporarily_unavailable, within the plugin\'s redisTimeoutMs', async () => {
      const started = Date.now();
      const res = await fetch(`${world().host.issuer}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'an-old-refresh-token-0123456789abcdefghijkl' }),
      });
      expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).to.deep.equal({ status: 503, error: 'temporarily_unavailable' });
      expect(Date.now() - started).to.be.below(3000);
    });

    it('the import counts each record it could not read as failed, within the bound, and does not finish (the window stays open)', async () => {
      const started = Date.now();
      const records = async function* () {
        for (let i = 0; i < 5; i += 1) yield { model: 'AccessToken', id: `an-old-access-token-${i}-0123456789abcdefghijkl` };
      };
      const progress = await world().host.plugin!.adoption!.importRecords({ records: { pages: async function* () { const list = []; for await (const r of records()) list.push(r); yield { records: list, checkpoint: '' }; } } });
      expect({ seen: progress.seen, failed: progress.failed, finished: progress.finishedAt }).to.deep.equal({ seen: 5, failed: 5, finished: undefined });
      expect(Date.now() - started).to.be.below(3000);
      expect(world().host.plugin!.adoption!.open).to.equal(true);
    });
  });
}

describe('a previous store that answers a token but not its grant', function () {
  this.timeout(30_000);
  const world = setUp(async () => {
    const made = await exampleRedisHost('adopt-half', [site]);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const token = { kind: 'AccessToken', jti: 'a-token-whose-grant-hangs-0123456789abcdef', clientId: site.client_id, accountId: 'half', grantId: 'a-grant-that-hangs', exp, iat: exp - 600, scope: 'openid' };
    const half = (model: string): Adapter => {
      const adapter = new made.before.Adapter(model);
      if (model === 'AccessToken') return Object.assign(adapter, { find: async () => token });
      const hang = () => new Promise(() => {});
      return Object.assign(adapter, { find: hang, findByUid: hang, revokeByGrantId: hang, destroy: hang });
    };
    await made.host.switchToPlugin({ previousAdapter: half, redisTimeoutMs: 300 });
    return { ...made, token };
  });

  it('answers the token\'s introspection 503 temporarily_unavailable within the bound (its grant is read from the previous store as it moves), and its revocation the same (nothing is ended or moved half-way)', async () => {
    const call = async (path: string) => {
      const started = Date.now();
      const res = await fetch(`${world().host.issuer}${path}`, {
        method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: world().token.jti }),
      });
      const text = await res.text();
      return { status: res.status, error: text ? (JSON.parse(text) as { error?: string }).error : undefined, fast: Date.now() - started < 3000 };
    };
    expect(await call('/token/introspection')).to.deep.equal({ status: 503, error: 'temporarily_unavailable', fast: true });
    expect(await call('/token/revocation')).to.deep.equal({ status: 503, error: 'temporarily_unavailable', fast: true });
  });
});

describe('a previous store that failed some records in a run cut short, then answers again', function () {
  this.timeout(60_000);
  const RECORDS = 150;
  const world = setUp(async () => {
    const redis = testRedis();
    const prefix = uniquePrefix('adopt-failed-resumed');
    const before = hostRedisAdapter(`${prefix}previous:`);
    const { ids, records } = await listedInteractions(before, 'failed', RECORDS);
    // The first page's first three records fail while the store is down for them.
    const down = { on: true };
    class Flaky extends before.Adapter {
      override async find(id: string) {
        if (down.on && ids.indexOf(id) < 3) throw new Error('connect ECONNREFUSED 127.0.0.1:6390');
        return super.find(id);
      }
    }
    const plugin = createSignoutNotify({ redis, keyPrefix: prefix, contacts: async () => undefined, logger: { info() {}, warn() {}, error() {} }, previousAdapter: Flaky, adoption: { records } });
    return {
      redis, prefix, plugin, ids, down, before,
      async close() {
        await plugin.close();
        await before.close();
        await dropPrefix(redis, prefix);
        await redis.quit();
      },
    };
  });

  it('the run that resumes past their page does not finish: the next run goes over the listing again and moves them, and only then the window closes', async () => {
    const { plugin, ids, down, redis, prefix } = world();
    // Cut short after two pages (as a SIGKILL between two recorded pages leaves it).
    const stop = new AbortController();
    const cut = await plugin.adoption!.importRecords({ perSecond: 10_000, signal: stop.signal, onProgress: (p) => { if (p.seen >= 100) stop.abort(); } });
    expect({ seen: cut.seen, failed: cut.failed, finished: cut.finishedAt }).to.deep.equal({ seen: 100, failed: 3, finished: undefined });
    down.on = false;

    const resumed = await plugin.adoption!.importRecords({ perSecond: 10_000 });
    expect({ seen: resumed.seen, moved: resumed.moved, failed: resumed.failed, finished: resumed.finishedAt }).to.deep.equal({ seen: RECORDS, moved: RECORDS - 3, failed: 3, finished: undefined });
    expect(plugin.adoption!.open).to.equal(true);

    const again = await plugin.adoption!.importRecords({ perSecond: 10_000 });
    expect({ seen: again.seen, moved: again.moved, failed: again.failed, finished: typeof again.finishedAt }).to.deep.equal({ seen: RECORDS, moved: 3, failed: 0, finished: 'number' });
    expect(plugin.adoption!.open).to.equal(false);
    const keys = adapterKeys(prefix);
    const here = await Promise.all(ids.map(async (id) => (await redis.hmget(keys.record('Interaction', id), 'p'))[0] !== null));
    expect(here.filter((moved) => !moved)).to.have.length(0);
  });
});
