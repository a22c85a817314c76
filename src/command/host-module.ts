import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Cluster, Redis } from 'ioredis';
import type Provider from 'oidc-provider';

import type { SignoutNotify } from '../signout-notify.ts';
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
    await client?.quit().catch(() => {});
    if (typeof close === 'function') await (close as () => unknown)();
  };
  if (!plugin.options.redis) {
    await closeAll();
    throw new UsageError(`the plugin ${path} builds keeps its data in that process (the embedded store, no redis option): the command works on a plugin on Redis`);
  }
  return { path, plugin, provider: provider as Provider | undefined, close: closeAll };
}
