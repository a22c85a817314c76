/**
 * The package from its tarball, in a host app nobody here wrote the way this
 * repository is written: plain JavaScript, no TypeScript, no loader. The
 * README's snippets are the host's code (taken from the README itself), with
 * the host's own sign-in step, clients, keys and cookies. Relying site:
 * openid-client; Redis: real; letters: a real SMTP sink.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';

import { openApiJson } from '../../src/api/openapi/document.ts';
import type { OpenApiDocument } from '../helpers/openapi.ts';

import { createHostApp, NODE_22_FLOOR, NODE_24, ROOT, run } from './app.ts';
import { anyInExports } from './no-any.ts';
import { checkTarball } from './tarball.ts';
import { emptyDatabase } from './host-calls.ts';
import { javaScriptHostSuites, letterWorkerSuite, type Installed } from './host-suites.ts';
import { koaHostSuite } from './koa-host.ts';
import { upgradeSuite } from './upgrade-suite.ts';
import { cliSuite } from './cli-suite.ts';


describe('the package from its tarball, in a host app (npm pack, npm install, README snippets)', function () {
  this.timeout(600_000);

  // Filled once by the hook below; the suites read it when they run.
  const installed = { processes: [] } as unknown as Installed;

  before(async () => {
    const started = Date.now();
    installed.app = await createHostApp();
    console.log(`      (packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s: ${installed.app.pack.entryCount} files)`);
    // As a host finds it: through the package's exports, where npm installed it.
    installed.openApiText = readFileSync(createRequire(join(installed.app.dir, 'package.json')).resolve('oidc-signout-notify/openapi.json'), 'utf8');
    installed.openapi = JSON.parse(installed.openApiText) as OpenApiDocument;
    installed.db = await emptyDatabase();
    installed.signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  });

  after(async () => {
    for (const p of installed.processes) p.child.kill('SIGKILL');
    if (installed.db) {
      await installed.db.client.flushdb();
      await installed.db.client.quit();
    }
    installed.app?.remove();
  });

  it('holds only the build, the sources its declaration maps name, README, LICENSE, CHANGELOG and package.json, and every file it loads at run time', () => {
    expect(checkTarball(installed.app.pack, join(installed.app.dir, 'node_modules/oidc-signout-notify'))).to.deep.equal([]);
  });

  it('ships the OpenAPI document as oidc-signout-notify/openapi.json: valid OpenAPI 3.1, the bytes the sources generate (the build adds nothing of its time or machine)', async () => {
    const result = await new Validator().validate(installed.openapi as unknown as Record<string, unknown>);
    expect([result.valid, result.errors ?? []]).to.deep.equal([true, []]);
    expect(installed.openApiText).to.equal(openApiJson());
  });

  it('installs one copy of oidc-provider and of ioredis in the host app (peer dependencies)', async () => {
    for (const name of ['oidc-provider', 'ioredis']) {
      const ls = await run(process.execPath, [process.env.npm_execpath ?? 'npm', 'ls', name, '--all', '--parseable'], { cwd: installed.app.dir, env: process.env });
      const copies = ls.stdout.split('\n').filter((line) => line.endsWith(`node_modules/${name}`));
      expect(copies, `${name}: ${ls.stdout}`).to.deep.equal([join(installed.app.dir, 'node_modules', name)]);
    }
  });

  const runtimes = [
    { name: `${process.versions.node} (this project's)`, version: process.versions.node, node: () => process.execPath },
    { name: `${NODE_22_FLOOR} (the engines floor)`, version: NODE_22_FLOOR, node: () => installed.app.node22Floor },
    { name: NODE_24, version: NODE_24, node: () => installed.app.node24 },
  ];
  javaScriptHostSuites(installed, runtimes);

  letterWorkerSuite(installed);

  koaHostSuite(installed);
  upgradeSuite(installed);
  cliSuite(installed);

  it('lets no `any` reach a host through the types of any entry point', () => {
    const packageDir = join(installed.app.dir, 'node_modules/oidc-signout-notify');
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string }> };
    const entries = Object.values(manifest.exports).flatMap((target) => (typeof target === 'object' && target.types ? [target.types] : []));
    expect(entries).to.deep.equal([
      './dist/src/index.d.ts', './dist/src/worker.d.ts', './dist/src/pages.d.ts', './dist/src/store-kit.d.ts',
      './dist/src/adoption.d.ts', './dist/adapters/redis.d.ts', './dist/adapters/memory.d.ts',
    ]);
    expect(anyInExports(packageDir, entries)).to.deep.equal([]);
  });

  it('type-checks a strict TypeScript host (skipLibCheck false) using the README snippets and the exported types', async () => {
    const tsc = join(installed.app.dir, 'node_modules/typescript/bin/tsc');
    const ran = await run(process.execPath, [tsc, '-p', installed.app.tsDir], { cwd: installed.app.tsDir });
    expect(`${ran.stdout}${ran.stderr}`).to.equal('');
    expect(ran.code).to.equal(0);
  });

  it('states the tarball\'s file count and size in the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const stated = /The tarball holds \*\*(\d+) files\*\*, ([\d.]+) kB packed \(([\d.]+) kB unpacked\)/.exec(readme);
    expect(stated, 'README: "The tarball holds **N files**, X kB packed (Y kB unpacked)"').to.not.equal(null);
    expect(Number(stated![1])).to.equal(installed.app.pack.entryCount);
    expect(Number(stated![2]) * 1000).to.be.closeTo(installed.app.pack.size, installed.app.pack.size * 0.1);
    expect(Number(stated![3]) * 1000).to.be.closeTo(installed.app.pack.unpackedSize, installed.app.pack.unpackedSize * 0.1);
    const parts = /`dist\/` \((\d+) modules as JavaScript, declarations\s+and declaration maps, and (\d+) Lua scripts\) and the (\d+) TypeScript sources/.exec(readme);
    expect(parts, 'README: "`dist/` (N modules as JavaScript, ..., and M Lua scripts) and the N TypeScript sources"').to.not.equal(null);
    const files = installed.app.pack.files.map((f) => f.path);
    expect(parts!.slice(1).map(Number)).to.deep.equal([
      files.filter((f) => f.startsWith('dist/') && f.endsWith('.js')).length,
      files.filter((f) => f.endsWith('.lua')).length,
      files.filter((f) => !f.startsWith('dist/') && f.endsWith('.ts')).length,
    ]);
  });
});
