import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mergeReports, writeMerged, type Report } from './merge.ts';

const mutant = (id: string, line: number, status: string, replacement = 'true', endColumn = 20) =>
  ({ id, mutatorName: 'ConditionalExpression', replacement, status, location: { start: { line, column: 5 }, end: { line, column: endColumn } } });
const report = (...mutants: ReturnType<typeof mutant>[]): Report => ({ files: { 'adapters/store-adapter.ts': { mutants } } });
const statuses = (r: Report) => r.files['adapters/store-adapter.ts']!.mutants.map((m) => m.status);

describe('npm run mutate: one report from the single-node and the Cluster run', () => {
  it('takes the better status of each mutant: killed in either run is killed, covered in either is not "no coverage"', () => {
    const single = report(mutant('1', 10, 'Killed'), mutant('2', 11, 'NoCoverage'), mutant('3', 12, 'Survived'), mutant('4', 13, 'NoCoverage'), mutant('5', 14, 'Survived'));
    const cluster = report(mutant('1', 10, 'Survived'), mutant('2', 11, 'Killed'), mutant('3', 12, 'Timeout'), mutant('4', 13, 'Survived'), mutant('5', 14, 'NoCoverage'));
    const merged = mergeReports(single, cluster);
    assert.deepEqual(statuses(merged), ['Killed', 'Killed', 'Timeout', 'Survived', 'Survived']);
    assert.equal((merged.files['adapters/store-adapter.ts']!.mutants[1] as { statusReason?: string }).statusReason, 'on the Cluster: Killed');
    assert.deepEqual(statuses(single), ['Killed', 'NoCoverage', 'Survived', 'NoCoverage', 'Survived'], 'the inputs are left as they were');
  });

  it('tells apart two mutants that start at one place (a condition and its first operand, both forced to true)', () => {
    const merged = mergeReports(
      report(mutant('1', 10, 'Killed', 'true', 30), mutant('2', 10, 'Survived', 'true', 12)),
      report(mutant('1', 10, 'Survived', 'true', 30), mutant('2', 10, 'Killed', 'true', 12)),
    );
    assert.deepEqual(statuses(merged), ['Killed', 'Killed']);
  });

  it('keeps a marked equivalent as it is', () => {
    assert.deepEqual(statuses(mergeReports(report(mutant('1', 10, 'Ignored')), report(mutant('1', 10, 'Killed')))), ['Ignored']);
  });

  it('refuses runs that made different mutants, either way round', () => {
    assert.throws(() => mergeReports(report(mutant('1', 10, 'Killed')), report(mutant('1', 10, 'Killed', 'false'))), /different mutants: adapters\/store-adapter.ts:10:5-10:20:ConditionalExpression:true is in one only/);
    assert.throws(() => mergeReports(report(mutant('1', 10, 'Killed')), report(mutant('1', 10, 'Killed'), mutant('2', 11, 'Killed'))), /different mutants: .*:11:5-11:20:.* is in one only/);
  });

  it('writes the JSON and the HTML page with the merged report in place of the first run’s', () => {
    const dir = mkdtempSync(join(tmpdir(), 'osn-merge-'));
    const template = join(dir, 'first.html');
    writeFileSync(template, '<script>\n      app.report = {"files":{}};\n      app.x = 1;\n</script>\n');
    const merged = report(mutant('1', 10, 'Killed', '</script>'));
    writeMerged(merged, join(dir, 'm.json'), template, join(dir, 'm.html'));
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8')), merged);
    const page = readFileSync(join(dir, 'm.html'), 'utf8');
    assert.equal(page, `<script>\n      app.report = ${JSON.stringify(merged).replace(/</g, '<"+"')};\n      app.x = 1;\n</script>\n`);
    assert.doesNotMatch(page, /<\/script>"/);
    assert.throws(() => writeMerged(merged, join(dir, 'n.json'), join(dir, 'm.json'), join(dir, 'n.html')), /no embedded report found/);
  });
});
