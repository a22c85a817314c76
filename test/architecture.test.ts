/**
 * The house's rules (docs/architecture.md), checked on every `npm test`:
 * imports go one way between the layers, no file cycles, examples/ use the
 * package's entry points only, nothing outside test/ imports test/. The
 * rules live in .dependency-cruiser.cjs; dependency-cruiser reads the code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractTsConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const root = fileURLToPath(new URL('..', import.meta.url));
const rules = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as { forbidden: unknown[]; options: Record<string, unknown> };

/** A violation as one readable line: rule, from, to (a cycle's whole path). */
function line(v: IViolation): string {
  const via = v.cycle?.length ? v.cycle.map((c) => c.name).join(' -> ') : v.to;
  return `${v.rule.name}: ${v.from} -> ${via}`;
}

/** The violations of the rules over the given folders. */
export async function violations(folders: string[]): Promise<string[]> {
  const previous = process.cwd();
  process.chdir(root);
  try {
    const result = await cruise(folders, {
      ...(rules.options as object),
      ruleSet: { forbidden: rules.forbidden } as never,
      validate: true,
      outputType: 'json',
    }, undefined, { tsConfig: extractTsConfig('tsconfig.json') });
    // outputType 'json' hands the result over as JSON text.
    const output = JSON.parse(result.output as string) as ICruiseResult;
    return output.summary.violations.map(line).sort();
  } finally {
    process.chdir(previous);
  }
}

describe('the house: imports go one way (.dependency-cruiser.cjs, docs/architecture.md)', function () {
  this.timeout(120_000);

  it('has no cycle and no import against the layers in src/, adapters/, views/, examples/, bench/ and scripts/', async () => {
    expect(await violations(['src', 'adapters', 'views', 'examples', 'bench', 'scripts'])).to.deep.equal([]);
  });

  it('has no source file over 300 lines (the message tables excepted): a file that grows past a screenful or two of one idea splits along its ideas', () => {
    const files = execFileSync('git', ['ls-files', '*.ts', '*.lua', '*.cjs', '*.mjs'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
    const long = files
      .filter((file) => !file.startsWith('src/i18n/messages/'))
      .map((file) => [file, readFileSync(`${root}${file}`, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 300)
      .map(([file, lines]) => `${file}: ${lines} lines`);
    expect(long).to.deep.equal([]);
  });
});
