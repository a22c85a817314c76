import { expect } from 'chai';
import type { Redis } from 'ioredis';

import { RedisStore, type Store } from '../../src/index.ts';
import * as commands from '../../src/store/commands.ts';
import { dropPrefix, redisClient, uniquePrefix } from '../helpers/redis.ts';

const nextPhase = () => new Promise((r) => setImmediate(r));

describe('RedisStore: commands of one event-loop phase leave in one write', () => {
  let client: Redis;
  let store: Store;
  const prefix = uniquePrefix('redis-store');

  before(async () => {
    client = redisClient();
    await client.ping();
    store = new RedisStore(client, prefix);
  });
  after(async () => {
    await dropPrefix(client, prefix);
    await client.quit();
  });

  it('corks the socket at the first command of a phase and uncorks it right after the phase', async () => {
    expect(client.stream.writableCorked).to.equal(0);
    const pending = [store.get(`${prefix}a`), store.hmget(`${prefix}b`, ['p'])];
    expect(client.stream.writableCorked).to.equal(1);
    await nextPhase();
    expect(client.stream.writableCorked).to.equal(0);
    expect(await Promise.all(pending)).to.deep.equal([null, [null]]);
  });

  it('answers each of 500 commands sent together with its own reply, in order', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => `${prefix}k${i}`);
    await Promise.all(keys.map((key, i) => store.run(commands.putTtl(), [key], [60_000, 'v', String(i)])));
    const replies = await Promise.all(keys.flatMap((key) => [store.hmget(key, ['v']), store.pttl(key)]));
    keys.forEach((_, i) => {
      expect(replies[2 * i]).to.deep.equal([String(i)]);
      expect(replies[2 * i + 1]).to.be.within(1, 60_000);
    });
  });

  it('sends a command issued from a setImmediate callback (the phase that uncorks) without waiting for other work', async () => {
    const reply = await new Promise((resolve, reject) => {
      setImmediate(() => { store.get(`${prefix}missing`).then(resolve, reject); });
    });
    expect(reply).to.equal(null);
    expect(client.stream.writableCorked).to.equal(0);
  });

  it('leaves the socket alone while the client is not connected (the offline queue holds the command)', async () => {
    const lazy = redisClient();
    await lazy.ping();
    const offline = new RedisStore(lazy, prefix);
    lazy.disconnect(true);
    const pending = offline.get(`${prefix}missing`);
    expect(lazy.stream.writableCorked ?? 0).to.equal(0);
    expect(await pending).to.equal(null);
    await lazy.quit();
  });
});
