/** The reference provider's CONFIG_FILE upstreams: what it reads, and the field it names when one is bad. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';

import { ConfigurationError, settingsFromEnv } from '../../examples/reference/settings.ts';

describe('CONFIG_FILE upstreams', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'osn-upstreams-')); });
  after(() => rm(dir, { recursive: true, force: true }));

  async function settings(upstreams: unknown[]) {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, JSON.stringify({ clients: [], upstreams }));
    return settingsFromEnv({ CONFIG_FILE: path });
  }
  async function refusal(upstreams: unknown[]): Promise<string> {
    try {
      await settings(upstreams);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigurationError);
      return (err as Error).message.replace(/^CONFIG_FILE \S+: /, '');
    }
    return 'accepted';
  }
  const good = { id: 'social', name: 'Social', issuer: 'https://accounts.social.example', client_id: 'id', client_secret: 'secret' };

  it('reads { id, name, issuer, client_id, client_secret, scope }; none means no social sign-in', async () => {
    expect((await settings([{ ...good, scope: 'openid email' }])).upstreams).to.deep.equal([{ ...good, scope: 'openid email' }]);
    expect((await settings([])).upstreams).to.deep.equal([]);
  });

  it('names the field of a bad upstream', async () => {
    expect(await refusal([{ ...good, id: 'Social Login' }])).to.equal('upstreams[0].id: must be 1-40 lower-case letters, digits and hyphens');
    expect(await refusal([{ ...good, issuer: 'http://accounts.social.example' }])).to.match(/^upstreams\[0\]\.issuer: must be an https:\/\/ URL/);
    expect(await refusal([{ ...good, issuer: 'http://127.0.0.1:9000' }])).to.equal('accepted');
    expect(await refusal([{ ...good, scope: 'email' }])).to.equal('upstreams[0].scope: must include openid');
    expect(await refusal([{ ...good, client_secret: '' }])).to.match(/^upstreams\[0\]\.client_secret: /);
    expect(await refusal([{ ...good, extra: 1 }])).to.match(/^upstreams\[0\]: /);
    expect(await refusal([good, { ...good, name: 'Again' }])).to.equal('upstreams[1].id: duplicate "social"');
  });

  it('reads trustedEmailDomains normalised (exact domains; no wildcard, no leading dot, no address) and names a bad one', async () => {
    expect((await settings([{ ...good, trustedEmailDomains: [' Example.TEST. ', 'bücher.example'] }])).upstreams?.[0]?.trustedEmailDomains).to.deep.equal(['example.test', 'xn--bcher-kva.example']);
    const message = 'must be a domain name such as example.com (matched exactly: no wildcard, no leading dot; list each subdomain)';
    for (const [i, bad] of ['*.example.test', '.example.test', 'localhost', 'kate@example.test', ''].entries()) {
      expect(await refusal([{ ...good, trustedEmailDomains: ['ok.example', bad] }]), `${i}: ${bad}`).to.equal(`upstreams[0].trustedEmailDomains[1]: ${message}`);
    }
    expect(await refusal([{ ...good, trustedEmailDomains: 'example.test' }])).to.match(/^upstreams\[0\]\.trustedEmailDomains: /);
  });
});
