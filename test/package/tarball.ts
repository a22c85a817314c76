/**
 * What the tarball may hold and must hold. Allowed: package.json, README.md,
 * LICENSE, CHANGELOG.md, the docs the README links to (docs/*.md), the
 * build (dist/: JavaScript, declarations, declaration maps, Lua, the OpenAPI
 * document) and the TypeScript sources the declaration maps point at.
 * Required: every file the build loads at run time, and every doc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

import { ROOT, type PackResult } from './app.ts';

const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^docs\/[\w.-]+\.md$/,
  /^dist\/(src|adapters|views)\/[\w/.-]+\.(js|d\.ts|d\.ts\.map)$/,
  /^dist\/src\/(store|adopt|upstream-signals)\/lua\/[\w/-]+\.lua$/,
  /^dist\/openapi\.json$/,
  /^(src|adapters|views)\/[\w/.-]+\.ts$/,
];

const SOURCE_DIRS = ['src', 'adapters', 'views'];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split('\\').join('/'));
}

/**
 * Problems with the tarball's file list; empty when it is right. Shipped
 * files are read where the host installed them (`installed`).
 */
export function checkTarball(pack: PackResult, installed: string): string[] {
  const files = new Set(pack.files.map((f) => f.path));
  const problems: string[] = [];
  for (const file of files) {
    if (!ALLOWED.some((re) => re.test(file))) problems.push(`not allowed in the tarball: ${file}`);
  }
  const need = (file: string, why: string) => { if (!files.has(file)) problems.push(`missing ${file} (${why})`); };
  for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) need(file, 'the package');
  for (const doc of filesUnder('docs')) need(doc, 'linked from the README');

  // Each source module compiled, with its declarations and map, and shipped for the map.
  for (const dir of SOURCE_DIRS) {
    for (const source of filesUnder(dir)) {
      if (source.endsWith('.lua')) {
        need(`dist/${source}`, 'read by the store at run time');
      } else if (source.endsWith('.ts')) {
        const base = `dist/${source.slice(0, -3)}`;
        for (const ext of ['.js', '.d.ts', '.d.ts.map']) need(`${base}${ext}`, `compiled from ${source}`);
        need(source, 'named by its declaration map');
      }
    }
  }

  // Every exports target, and every relative import of the shipped JavaScript.
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> };
  for (const [entry, target] of Object.entries(manifest.exports)) {
    for (const path of typeof target === 'string' ? [target] : Object.values(target)) need(posix.normalize(path), `exports["${entry}"]`);
  }
  for (const file of files) {
    if (!file.endsWith('.js')) continue;
    const code = readFileSync(join(installed, file), 'utf8');
    for (const m of code.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      need(posix.join(dirname(file), m[1]!), `imported by ${file}`);
    }
  }
  return problems;
}
