/**
 * Mocha's spec reporter, then where the time went: each file's wall time
 * (its hooks included) and the slowest tests. For a serial run (no
 * --parallel: there, a file's events arrive together when it ends):
 * `node test/run.ts --reporter test/helpers/timing-reporter.cjs` (docs/testing.md).
 */
'use strict';
const Mocha = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_RUN_END } = Mocha.Runner.constants;

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map();
    const tests = [];
    const started = new Map();
    runner.on(EVENT_SUITE_BEGIN, (suite) => { if (suite.file && suite.parent && suite.parent.root) started.set(suite, Date.now()); });
    runner.on(EVENT_SUITE_END, (suite) => {
      const at = started.get(suite);
      if (at === undefined) return;
      files.set(suite.file, (files.get(suite.file) || 0) + Date.now() - at);
    });
    const test = (t) => tests.push([t.duration || 0, `${t.file ? t.file.replace(/^.*\/test\//, 'test/') : ''}: ${t.fullTitle()}`]);
    runner.on(EVENT_TEST_PASS, test);
    runner.on(EVENT_TEST_FAIL, test);
    runner.once(EVENT_RUN_END, () => {
      const s = (ms) => `${(ms / 1000).toFixed(1).padStart(7)} s`;
      const byFile = [...files].sort((a, b) => b[1] - a[1]);
      const total = byFile.reduce((a, [, ms]) => a + ms, 0);
      console.log(`\n  time by file (${s(total).trim()} in all):`);
      for (const [file, ms] of byFile.slice(0, 40)) console.log(`  ${s(ms)}  ${file.replace(/^.*\/test\//, 'test/')}`);
      console.log('\n  slowest tests:');
      for (const [ms, title] of tests.sort((a, b) => b[0] - a[0]).slice(0, 30)) console.log(`  ${s(ms)}  ${title.slice(0, 200)}`);
    });
  }
}

module.exports = TimingReporter;
