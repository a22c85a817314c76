import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Cluster, Redis } from 'ioredis';
import type Provider from 'oidc-provider';

import type { SignoutNotify } from '../signout-notify.ts';
import { StoreUnavailableError } from '../store/availability.ts';
import { DEFAULT_MODULE, MODULE_ENV, UsageError } from './args.ts';
import { commandMode } from './mode.ts';

/** What the command takes from the host's module (README's provider.js): the plugin, and what it needs beside it. */
export interface HostModule {
  /** Where it was loaded from. */
  path: string;
  plugin: SignoutNotify;
  /** The provider built with the plugin's configure(), when the module exports it (import, end-site-access need it). */
  provider: Provider | undefined;
  /** Closes what the module and the command opened: the plugin, the Redis client, and the module's own `close` export, if any. */
  close(): Promise<void>;
}

/** A module failed to load (it threw): exit 1, not a usage error. */
export class ModuleError extends Error {}

/** How long the command waits for Redis to answer at start: past it, exit 1 (Redis unavailable). */
const CONNECT_MS = 5000;

/** Resolves once the client is connected; a StoreUnavailableError past CONNECT_MS, with the client's last error. */
function reachable(client: Redis | Cluster): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'wait') client.connect().catch(() => {});
  return new Promise((resolve, reject) => {
    let last = '';
    const onError = (err: Error) => { last = err.message; };
    const done = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    const onReady = () => {
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new StoreUnavailableError(`redis: no connection within ${CONNECT_MS / 1000} s${last ? ` (${last.slice(0, 120)})` : ''}`));
    }, CONNECT_MS);
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

const looksLikePlugin = (value: unknown): value is SignoutNotify =>
  typeof value === 'object' && value !== null && typeof (value as SignoutNotify).deleteAccount === 'function' && typeof (value as SignoutNotify).configure === 'function';

/**
 * Imports the host's module that builds the plugin: `--module`, else the
 * environment variable, else ./provider.js in the current directory. The
 * command is entered first (commandMode), so that the plugin the module
 * attaches starts no letter worker here. The plugin must be on Redis: the
 * embedded store's data lives in the service's process.
 */
export async function loadHostModule(given: string | undefined, env: NodeJS.ProcessEnv, cwd: string): Promise<HostModule> {
  const path = resolve(cwd, given ?? env[MODULE_ENV] ?? DEFAULT_MODULE);
  if (!existsSync(path)) {
    throw new UsageError(`no module at ${path}: give the module that builds the plugin with --module <file> (or ${MODULE_ENV}); the default is ${DEFAULT_MODULE} in the current directory`);
  }
  commandMode.enter();
  let loaded: Record<string, unknown>;
  try {
    loaded = await import(pathToFileURL(path).href) as Record<string, unknown>;
  } catch (err) {
    throw new ModuleError(`${path} failed to load: ${(err as Error)?.message ?? String(err)}`);
  }
  const { plugin, provider, redis, close } = loaded;
  if (!looksLikePlugin(plugin)) throw new UsageError(`${path} exports no \`plugin\` (what createSignoutNotify returned): export it, as README's provider.js does`);
  const client = (redis ?? plugin.options.redis) as Redis | Cluster | undefined;
  const closeAll = async () => {
    await plugin.close().catch(() => {});
    // QUIT waits for a connection: a client that has none is cut.
    if (client?.status === 'ready') await client.quit().catch(() => {});
    else client?.disconnect();
    if (typeof close === 'function') await (close as () => unknown)();
  };
  if (!plugin.options.redis) {
    await closeAll();
    throw new UsageError(`the plugin ${path} builds keeps its data in that process (the embedded store, no redis option): the command works on a plugin on Redis`);
  }
  try {
    await reachable(plugin.options.redis);
  } catch (err) {
    await closeAll();
    throw err;
  }
  return { path, plugin, provider: provider as Provider | undefined, close: closeAll };
}
