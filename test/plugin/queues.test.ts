/**
 * plugin.queues() (docs/operations.md "The queues"): each queue's jobs by
 * state and the oldest waiting one's age, read from Redis without a worker;
 * refused on the embedded store, whose queues live in the service's process.
 */
import { expect } from 'chai';

import { createSignoutNotify, type SignoutNotify } from '../../src/index.ts';
import { dropPrefix, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { setUp } from '../helpers/set-up.ts';

const quiet = { info() {}, warn() {}, error() {} };
const zeros = { waiting: 0, active: 0, delayed: 0, failed: 0, oldestWaitingSeconds: null };

describe('plugin.queues(): the queues as an operator watches them', () => {
  const world = setUp(async () => {
    const redis = testRedis();
    const prefix = uniquePrefix('queues');
    const plugin: SignoutNotify = createSignoutNotify({ redis, keyPrefix: prefix, contacts: async () => undefined, logger: quiet, letters: { worker: false } });
    return { plugin, async close() { await plugin.close(); await dropPrefix(redis, prefix); await redis.quit(); } };
  });

  it('counts nothing on a store with no jobs, then a letter queued and not sent as waiting, its age from when it was queued', async () => {
    const { plugin } = world();
    expect(await plugin.queues()).to.deep.equal({ letters: zeros, logouts: zeros, sharedSignals: zeros, sessionExpiry: zeros });
    await plugin.letters.add({ id: 'queues-letter-1', accountId: 'a', clientId: 'c', category: 'transactional', title: 't', body: 'b', url: null });
    await plugin.letters.add({ id: 'queues-letter-2', accountId: 'a', clientId: 'c', category: 'transactional', title: 't', body: 'b', url: null });
    const counted = await plugin.queues();
    expect(counted.letters.oldestWaitingSeconds).to.be.a('number').and.within(0, 5);
    expect(counted).to.deep.equal({ letters: { ...zeros, waiting: 2, oldestWaitingSeconds: counted.letters.oldestWaitingSeconds }, logouts: zeros, sharedSignals: zeros, sessionExpiry: zeros });
  });

  it('is refused on the embedded store, saying why', async () => {
    const embedded = createSignoutNotify({ contacts: async () => undefined, logger: quiet, letters: { worker: false } });
    try {
      const refused = await embedded.queues().then(() => undefined, (err: unknown) => err);
      expect(refused).to.be.instanceOf(TypeError);
      expect((refused as Error).message).to.equal('oidc-signout-notify: queues() counts the queues on Redis; the embedded store keeps its queues in the service\'s process');
    } finally {
      await embedded.close();
    }
  });
});
