/**
 * The docs say what the code does: the error table and the route list come
 * from the catalog (src/http/error-codes.ts) and the route table
 * (src/routes.ts), every spec section has a row in the spec map, and every
 * file the docs and the README name exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

import { expect } from 'chai';
import Provider from 'oidc-provider';

import { ERRORS } from '../src/http/error-codes.ts';
import { resolveOptions } from '../src/options.ts';
import { createParts } from '../src/parts.ts';
import { ownRoutes } from '../src/routes.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The cells of a Markdown table's body rows under the header that starts with `header`. */
function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  if (start < 0) throw new Error(`no table headed "${header}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim().replace(/^`|`$/g, '')));
  }
  return rows;
}

/** The spec's sections (SPEC.md is kept outside the repository), in its order. */
const SPEC_SECTIONS = [
  'What the service does', 'Resources and their fields', 'States and transitions', 'Endpoints',
  'Authentication', 'Events', 'Errors', 'Limits', 'Versioning',
];

/** The cells of the body rows of the first table after the heading `## <section>`. */
function sectionRows(markdown: string, section: string): string[][] {
  const lines = markdown.split('\n');
  const heading = lines.indexOf(`## ${section}`);
  if (heading < 0) return [];
  const header = lines.findIndex((l, i) => i > heading && l.startsWith('|'));
  const next = lines.findIndex((l, i) => i > heading && l.startsWith('## '));
  if (header < 0 || (next >= 0 && header > next)) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

// A repository path wherever a doc writes it (in code, a link's text, a diagram), not inside a
// URL or a relative link; `*` is a wildcard in the file name.
const NAMED_PATH = /(?<![\w./-])(?:\.dependency-cruiser\.cjs|README\.md|CHANGELOG\.md|package\.json|(?:src|adapters|views|test|docs|examples|bench|scripts)\/[\w./*-]*)/g;

function namedPaths(markdown: string): string[] {
  return [...new Set([...markdown.matchAll(NAMED_PATH)].map((m) => m[0].replace(/[.,]+$/, '')))];
}

function exists(path: string): boolean {
  const at = (p: string) => new URL(`../${p}`, import.meta.url);
  if (!path.includes('*')) return existsSync(at(path));
  // `test/**/*.test.ts`: the folder before the recursive part is what can go stale.
  if (path.includes('**')) return existsSync(at(path.slice(0, path.indexOf('**'))));
  const folder = path.slice(0, path.lastIndexOf('/'));
  // A named path holds only word characters, dots, dashes and stars: only the dots need escaping.
  const name = new RegExp(`^${path.slice(folder.length + 1).replaceAll('.', '\\.').replaceAll('*', '[^/]*')}$`);
  return existsSync(at(folder)) && readdirSync(at(folder)).some((file) => name.test(file));
}

describe('the docs say what the code does', () => {
  it('docs/errors.md lists every error of the catalog, with its code, status and who raises it', () => {
    const rows = tableRows(read('docs/errors.md'), '| Name | Code | Status |').map(([name, code, status, by]) => ({ name, code, status: Number(status), by }));
    expect(rows).to.deep.equal(Object.entries(ERRORS).map(([name, e]) => ({
      name, code: e.code, status: e.status, by: 'provider' in e ? 'oidc-provider' : 'the plugin',
    })));
  });

  it('the README\'s errors of POST /api/notify are the catalog\'s, status for status', () => {
    const rows = tableRows(read('README.md'), '| Status | `error` | When |');
    expect(rows.length).to.be.above(4);
    const catalog = Object.values(ERRORS as Record<string, { code: string; status: number }>);
    for (const [status, code] of rows) {
      expect(catalog.some((e) => e.code === code && e.status === Number(status)), `${status} ${code}`).to.equal(true);
    }
  });

  it('docs/routes.md lists the plugin\'s own routes exactly as its router registers them', async () => {
    const parts = createParts(resolveOptions({ contacts: () => undefined, logger: { info() {}, warn() {}, error() {} } }), {});
    try {
      const { table } = ownRoutes(new Provider('http://localhost:3000', {}), parts);
      const documented = tableRows(read('docs/routes.md'), '| Method | Path |').map(([method, path]) => `${method} ${path}`).sort();
      expect(documented).to.deep.equal(table.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).sort());
    } finally {
      await parts.letters.close();
      await parts.store.close();
    }
  });

  it('docs/spec-map.md has a table for every section of the spec; each row says where the rule lives and names its tests or says there is none yet', () => {
    const map = read('docs/spec-map.md');
    for (const section of SPEC_SECTIONS) {
      const rows = sectionRows(map, section);
      expect(rows.length, section).to.be.above(0);
      for (const row of rows) {
        expect(row, `${section}: ${row[0]}`).to.have.length(3);
        expect(row.every((cell) => cell !== ''), `${section}: ${row[0]}`).to.equal(true);
        expect(/`test\/|no test yet/i.test(row[2]!), `${section}: ${row[0]}`).to.equal(true);
      }
    }
  });

  const docs = readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  for (const doc of [...docs, 'README.md', 'bench/results/README.md']) {
    it(`every file and folder ${doc} names exists`, () => {
      expect(namedPaths(read(doc)).filter((path) => !exists(path))).to.deep.equal([]);
    });
  }

  it('the maps name enough files for their check to mean something', () => {
    expect(namedPaths(read('docs/spec-map.md')).length).to.be.above(100);
    expect(namedPaths(read('docs/architecture.md')).length).to.be.above(20);
  });
});
