import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { MemoryKV } from './memory-kv.ts';

/** A value a script may return: what Redis' Lua-to-RESP conversion can produce. */
export type ScriptReply = number | string | null | ScriptReply[];

/**
 * One atomic read-modify-write step. On Redis it runs as the Lua file next to
 * this module; in the embedded store the `memory` twin does the same on the
 * in-process data (single-threaded, so it is atomic by construction).
 * The contract tests run every caller against both.
 */
export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
  memory(kv: MemoryKV, keys: string[], argv: string[]): ScriptReply;
}

export function defineScript(
  name: string,
  lua: string,
  memory: Script['memory'],
): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex'), memory };
}

/**
 * Reads `./lua/<name>.lua` next to the given module URL, with each line
 * `--- @include "<step>"` replaced by `./lua/includes/<step>.lua` (as BullMQ
 * does): scripts share steps without sharing state. Call lazily, not at import.
 */
export function loadLua(name: string, base: string | URL = import.meta.url): string {
  return readFileSync(new URL(`./lua/${name}.lua`, base), 'utf8')
    .replace(/^--- @include "([\w-]+)"$/gm, (_line, step: string) => readFileSync(new URL(`./lua/includes/${step}.lua`, base), 'utf8').trimEnd());
}

/**
 * A script read on first use (importing a module reads no files): `./lua/<name>.lua`
 * beside `base` with its in-process twin for the embedded store.
 */
export function lazyScript(name: string, memory: Script['memory'], base: string | URL = import.meta.url): () => Script {
  let loaded: Script | undefined;
  return () => (loaded ??= defineScript(name, loadLua(name, base), memory));
}
