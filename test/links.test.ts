/**
 * Links that work where they are read: every relative link of README.md
 * resolves in the packed tarball's file list (the README is read in
 * node_modules and on the registry, where only the tarball is), and every
 * relative link of docs/ in the repository; a link to a heading of a
 * Markdown file names a heading it has (GitHub's anchors).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

import { expect } from 'chai';

import { npm, ROOT, type PackResult } from './package/app.ts';

/** The relative links of a Markdown text (inline links and images), outside code. */
export function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!.replace(/<[^>]+>/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/**
 * The links of `file` that do not resolve: to a path `has` does not know, or
 * to a heading the Markdown file it names does not have.
 */
function broken(file: string, has: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const link of relativeLinks(read(file))) {
    const [path = '', anchor] = link.split('#');
    const target = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURI(path))).replace(/\/$/, '');
    if (target.startsWith('..') || !has(target)) {
      problems.push(`${file}: ${link} (${target} is not there)`);
      continue;
    }
    if (anchor && target.endsWith('.md') && !anchors(read(target)).has(anchor)) problems.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
  }
  return problems;
}

describe('links work where they are read', function () {
  this.timeout(60_000);

  it('every relative link of README.md resolves in the packed tarball\'s file list, headings included', async () => {
    const packed = await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT);
    const files = new Set((JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as PackResult[])[0]!.files.map((f) => f.path));
    expect(relativeLinks(read('README.md')).length).to.be.above(40);
    expect(broken('README.md', (path) => files.has(path))).to.deep.equal([]);
  });

  it('every relative link of docs/ resolves in the repository, headings included', () => {
    const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const inRepository = (path: string) => existsSync(join(ROOT, path)) && (statSync(join(ROOT, path)).isFile() || statSync(join(ROOT, path)).isDirectory());
    expect(docs.flatMap((file) => broken(file, inRepository))).to.deep.equal([]);
  });

  it('finds what it looks for: links outside code, the anchors GitHub makes', () => {
    expect(relativeLinks('[a](docs/x.md#y) `[b](no.md)` ![c](img.png) [d](https://e.example) [f](#g)\n```\n[h](no.md)\n```')).to.deep.equal(['docs/x.md#y', 'img.png', '#g']);
    expect([...anchors('# The demo relying site (`examples/demo-site/`)\n## Rules: A & B\n## Rules: A & B\n')]).to.deep.equal([
      'the-demo-relying-site-examplesdemo-site', 'rules-a--b', 'rules-a--b-1',
    ]);
    expect(relative(ROOT, dirname(join(ROOT, 'docs/x.md')))).to.equal('docs');
  });
});
