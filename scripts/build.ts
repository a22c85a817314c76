/**
 * `npm run build` (and `prepack`): compiles src/, adapters/ and views/ to
 * dist/ as JavaScript with declarations and declaration maps, copies the
 * Lua scripts the store reads at run time beside the compiled store, and
 * writes the OpenAPI document (dist/openapi.json, generated from the routes'
 * zod schemas by src/api/openapi/document.ts; the package serves and exports it).
 *
 * tsc rewrites the sources' `./x.ts` imports to `./x.js` in JavaScript but
 * keeps them in declarations; they are rewritten here too (same length, so
 * the declaration maps stay exact), so any TypeScript host resolves them.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('build: tsc failed');
  process.exit(compiled.status ?? 1);
}

cpSync(join(root, 'src/store/lua'), join(dist, 'src/store/lua'), { recursive: true });
cpSync(join(root, 'src/adopt/lua'), join(dist, 'src/adopt/lua'), { recursive: true });
cpSync(join(root, 'src/upstream-signals/lua'), join(dist, 'src/upstream-signals/lua'), { recursive: true });

// Generated here, not at run time: zod-openapi is a devDependency (it needs a newer Node 22 than `engines`; docs/choices.md).
const { openApiJson } = await import('../src/api/openapi/document.ts');
writeFileSync(join(dist, 'openapi.json'), openApiJson());

const RELATIVE_TS = /(["'])(\.{1,2}\/[^"'\n]*?)\.ts\1/g;
let declarations = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_TS, '$1$2.js$1');
  if (rewritten !== text) writeFileSync(file, rewritten);
  declarations += 1;
}
console.log(`build: dist/ written (${declarations} declaration files, openapi.json)`);
