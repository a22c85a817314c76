import { expect } from 'chai';
import { Redis } from 'ioredis';

import { RedisStore, redisReconnect, type Store } from '../../src/index.ts';
import { StoreUnavailableError } from '../../src/store/availability.ts';
import * as commands from '../../src/store/commands.ts';
import { dropPrefix, REDIS_URL, redisClient, uniquePrefix } from '../helpers/redis.ts';

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

  it('fails a command at once while a client that was connected is reconnecting (503 temporarily_unavailable), and never sends it later', async () => {
    const lazy = redisClient();
    await lazy.ping();
    const offline = new RedisStore(lazy, prefix);
    lazy.disconnect(true);
    const started = Date.now();
    const err = await offline.run(commands.upsert(), [`${prefix}late`], ['v', 60_000]).then(() => null, (e: unknown) => e);
    expect(Date.now() - started).to.be.below(100);
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(err).to.include({ status: 503, error: 'temporarily_unavailable' });
    expect(lazy.stream.writableCorked ?? 0).to.equal(0);
    await new Promise((r) => lazy.once('ready', r));
    await nextPhase();
    expect(await client.exists(`${prefix}late`)).to.equal(0);
    await lazy.quit();
  });

  it('waits for the first connection of a new client, at most timeoutMs', async () => {
    const fresh = redisClient();
    const store = new RedisStore(fresh, prefix, { timeoutMs: 2000 });
    expect(await store.get(`${prefix}missing`)).to.equal(null);
    await fresh.quit();
    // A lazyConnect client is connected by its first command, as ioredis does.
    const lazy = new Redis(REDIS_URL, { lazyConnect: true });
    expect(await new RedisStore(lazy, prefix, { timeoutMs: 2000 }).get(`${prefix}missing`)).to.equal(null);
    await lazy.quit();
    const nowhere = new Redis({ port: 1, lazyConnect: false, retryStrategy: () => 50 });
    nowhere.on('error', () => {});
    const unreachable = new RedisStore(nowhere, prefix, { timeoutMs: 300 });
    const started = Date.now();
    const err = await unreachable.get(`${prefix}missing`).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(Date.now() - started).to.be.within(250, 1000);
    nowhere.disconnect();
  });
});

describe('redisReconnect: the reconnect schedule hosts build their client with', () => {
  it('tries again after 50, 100, 200 ms, then every 400 ms, each with less than 100 ms more at random; the same when no sentinel answers', () => {
    const { retryStrategy, sentinelRetryStrategy } = redisReconnect;
    for (const strategy of [retryStrategy!, sentinelRetryStrategy!]) {
      const delays = (attempt: number) => Array.from({ length: 200 }, () => strategy(attempt) as number);
      for (const [attempt, base] of [[1, 50], [2, 100], [3, 200], [4, 400], [5, 400], [1000, 400]] as const) {
        const seen = delays(attempt);
        expect(Math.min(...seen), `attempt ${attempt}`).to.be.at.least(base);
        expect(Math.max(...seen), `attempt ${attempt}`).to.be.below(base + 100);
        // Spread, so that many clients do not reconnect in step.
        expect(new Set(seen).size, `attempt ${attempt}`).to.be.above(20);
      }
    }
  });
});
