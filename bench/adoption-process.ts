/**
 * The benchmark's adoption case (bench/ops/adoption.ts) in a process of its
 * own: the bench host (bench/host.ts) once on oidc-provider's example Redis
 * adapter, as a team ran it before the plugin (not listening: its models mint
 * the old tokens), and once with the plugin and `previousAdapter` reading that
 * store, listening. Settings as JSON in BENCH_SETTINGS (port, redisUrl,
 * keyPrefix, previousPrefix, jwks, cookieKeys).
 */
import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
import type { Adapter } from 'oidc-provider';

import { exampleRedisAdapter, exampleRedisRecords } from '../src/adoption.ts';
import { createSignoutNotify } from '../src/index.ts';
import { benchLogger, countProviderErrors, hostConfiguration, listen, type CommonSettings } from './host.ts';
import { createMinter, type Minter } from './mint.ts';
import { processCpuMicros, serve } from './rpc.ts';
import { benchEmail } from './servers.ts';

export interface AdoptionSettings extends CommonSettings {
  redisUrl: string;
  keyPrefix: string;
  previousPrefix: string;
}

export type AdoptionApi = {
  accounts(arg: { count: number }): Promise<void>;
  /** Access tokens: `old` ones saved by oidc-provider on the example adapter, `native` ones by the plugin's. */
  mint(arg: { where: 'old' | 'native'; count: number }): Promise<string[]>;
  counters(arg: undefined): Promise<{ commands: number; roundTrips: number; lookups: number; cpuMicros: number }>;
  /** Closes the window as a finished import does (an import over an empty listing). */
  closeWindow(arg: undefined): Promise<boolean>;
  close(arg: undefined): Promise<void>;
};

const settings = JSON.parse(process.env.BENCH_SETTINGS ?? '{}') as AdoptionSettings;
const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 2 });
const example = exampleRedisAdapter(redis, { prefix: settings.previousPrefix });
let lookups = 0;
// The previous store's lookups, counted (find, findByUid, findByUserCode).
const previousAdapter = (model: string): Adapter => {
  const inner = example(model);
  return Object.assign(Object.create(inner) as Adapter, {
    find: (id: string) => { lookups += 1; return inner.find(id); },
    findByUid: (uid: string) => { lookups += 1; return inner.findByUid!(uid); },
    findByUserCode: (code: string) => { lookups += 1; return inner.findByUserCode!(code); },
  });
};

const accounts = new Map<string, string>();
const issuer = `http://127.0.0.1:${settings.port}`;
const before = new Provider(issuer, { ...hostConfiguration(settings, accounts), adapter: example });
const logger = benchLogger('adoption');
const plugin = createSignoutNotify({
  redis, keyPrefix: settings.keyPrefix, logger, contacts: (accountId) => ({ email: benchEmail(accountId) }),
  letters: { worker: false },
  previousAdapter,
  adoption: { records: exampleRedisRecords(redis, { prefix: settings.previousPrefix }), checkEveryMs: 3_600_000 },
});
const provider = new Provider(issuer, plugin.configure(hostConfiguration(settings, accounts)));
plugin.attach(provider);
countProviderErrors(provider, logger);
const server = await listen(provider, settings.port);
let minters: { old: Minter; native: Minter } | undefined;

const api: AdoptionApi = {
  async accounts({ count }) {
    const ids = Array.from({ length: count }, (_, i) => `account-${i}`);
    for (const id of ids) accounts.set(id, benchEmail(id)!);
    minters = { old: await createMinter(before, ids), native: await createMinter(provider, ids) };
  },
  async mint({ where, count }) {
    if (!minters) throw new Error('call accounts() first');
    return minters[where].mint('access', count);
  },
  async counters() {
    return { commands: plugin.store.commandsSent, roundTrips: plugin.store.roundTrips, lookups, cpuMicros: processCpuMicros() };
  },
  async closeWindow() {
    await plugin.adoption!.importRecords({ records: { async *pages() {} } });
    return plugin.adoption!.open;
  },
  async close() {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await plugin.close();
    await redis.quit();
    setImmediate(() => process.exit(0));
  },
};
serve(api);
// The orchestrator went away (killed, crashed): do not outlive it.
process.on('disconnect', () => process.exit(1));
process.send!({ ready: true });
