/** `node examples/start.ts` with a bad configuration stops with one clear message that names the setting. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';

import { freePort } from '../helpers/net.ts';
import { exitWithin, REFUSAL_MS, start, stopAll } from '../helpers/start-process.ts';

describe('quick start: bad configuration stops start-up with one clear message', function () {
  // A start a test, up to REFUSAL_MS on a loaded machine.
  this.timeout(REFUSAL_MS + 10_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'osn-startup-'));
  });
  afterEach(stopAll);
  after(() => rm(dir, { recursive: true, force: true }));

  /** Runs start.ts to its exit; returns the single configuration error line. */
  async function refused(env: Record<string, string>): Promise<string> {
    const run = start(env);
    const { code, signal } = await exitWithin(run, REFUSAL_MS);
    expect({ code, signal }, run.output()).to.deep.equal({ code: 1, signal: null });
    expect(run.stdout(), 'stdout').to.equal('');
    const lines = run.stderr().split('\n').filter((l) => l !== '');
    expect(lines, run.stderr()).to.have.length(1);
    expect(lines[0]).to.match(/^Configuration error: /);
    expect(run.output()).to.not.match(/^\s+at /m);
    return lines[0]!;
  }

  async function configFile(name: string, content: unknown): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(content));
    return path;
  }

  it('PORT=notanumber names PORT', async () => {
    const line = await refused({ PORT: 'notanumber' });
    expect(line).to.match(/^Configuration error: environment: PORT: \S/);
  });

  it('a client without client_id names clients[0].client_id', async () => {
    const path = await configFile('no-client-id.json', {
      clients: [{ client_name: 'Nameless', redirect_uris: ['http://localhost:3001/callback'] }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.match(new RegExp(`^Configuration error: CONFIG_FILE ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: clients\\[0\\]\\.client_id: \\S`));
  });

  it('a missing CONFIG_FILE names CONFIG_FILE and the path', async () => {
    const path = join(dir, 'does-not-exist.json');
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE: cannot read ${path} (ENOENT)`);
  });

  it('an organization naming an unknown client names organizations[0].clients[0]', async () => {
    const path = await configFile('unknown-org-client.json', {
      clients: [{ client_id: 'known', redirect_uris: ['http://localhost:3001/callback'] }],
      organizations: [{ id: 'org-1', name: 'Org', admins: ['admin@example.com'], members: [], clients: ['nope'] }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE ${path}: organizations[0].clients[0]: unknown client "nope"`);
  });

  it('an upstream whose issuer is plain http off loopback names upstreams[0].issuer', async () => {
    const path = await configFile('http-upstream.json', {
      clients: [],
      upstreams: [{ id: 'social', name: 'Social', issuer: 'http://social.example', client_id: 'a', client_secret: 'b' }],
    });
    const line = await refused({ PORT: String(await freePort()), CONFIG_FILE: path });
    expect(line).to.equal(`Configuration error: CONFIG_FILE ${path}: upstreams[0].issuer: must be an https:// URL (http:// on localhost or 127.0.0.1 only, for development)`);
  });
});
