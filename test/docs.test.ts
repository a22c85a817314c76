/**
 * The docs say what the code does: the error table and the route list come
 * from the catalog (src/http/error-codes.ts) and the route table
 * (src/routes.ts), and every spec section has a row in the spec map.
 */
import { readFileSync } from 'node:fs';

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
});
