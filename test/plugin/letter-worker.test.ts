import { generateKeyPairSync } from 'node:crypto';

import { expect } from 'chai';
import Provider, { type JWK } from 'oidc-provider';

import { createSignoutNotify, type LetterJob, type SignoutNotify } from '../../src/index.ts';
import { runLetterWorker } from '../../src/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };
const contacts = async () => ({ email: 'someone@example.com' });
const job = (id: string): LetterJob => ({ id, accountId: 'a', clientId: 'c', category: 'transactional', title: 't', body: 'b', url: null });

/** A provider at `issuer` built with the plugin's configuration (signing key of its own, no dev interactions). */
function providerFor(plugin: SignoutNotify, issuer: string): Provider {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as JWK;
  return new Provider(issuer, plugin.configure({ jwks: { keys: [key] }, features: { devInteractions: { enabled: false } } }));
}

describe('letters to the log only on loopback, or when the host says so (mail.outbox)', () => {
  const plugins: SignoutNotify[] = [];
  afterEach(async () => {
    for (const p of plugins.splice(0)) await p.close();
  });
  const make = (mail: Record<string, unknown>, lines: string[] = []) => {
    const logger = { info() {}, warn: (m: string) => { lines.push(m); }, error() {} };
    const made = createSignoutNotify({ contacts, logger, mail, letters: { worker: false } });
    plugins.push(made);
    return made;
  };

  it('refuses to attach to an issuer off loopback with neither transport nor smtpUrl, and says what to set', () => {
    const plugin = make({});
    const provider = providerFor(plugin, 'https://id.example');
    expect(() => plugin.attach(provider)).to.throw(TypeError, "oidc-signout-notify: no mail transport for https://id.example: set mail.transport or mail.smtpUrl, or mail.outbox: 'log' to print letters to the log");
    expect(() => plugin.startLetterWorker(provider)).to.throw(TypeError, 'no mail transport for https://id.example');
  });

  it("attaches with mail.outbox: 'log', warning loudly; on loopback without a word; with smtpUrl anywhere", () => {
    const lines: string[] = [];
    const logged = make({ outbox: 'log' }, lines);
    logged.attach(providerFor(logged, 'https://id.example'));
    expect(lines.filter((l) => l.includes('LETTERS ARE PRINTED TO THE LOG'))).to.have.length(1);
    for (const issuer of ['http://localhost:3000', 'http://127.0.0.1:4000', 'http://id.localhost']) {
      const quiet = make({}, lines);
      quiet.attach(providerFor(quiet, issuer));
    }
    const smtp = make({ smtpUrl: 'smtp://127.0.0.1:1' }, lines);
    smtp.attach(providerFor(smtp, 'https://id.example'));
    expect(lines.filter((l) => l.includes('LETTERS ARE PRINTED TO THE LOG'))).to.have.length(1);
  });
});

describe('the letter worker outside the service (startLetterWorker, stopLetterWorker, runLetterWorker)', () => {
  const plugins: SignoutNotify[] = [];
  const plugin = (letters: Record<string, unknown> = {}) => {
    const made = createSignoutNotify({ contacts, logger: quiet, letters: { worker: false, ...letters } });
    plugins.push(made);
    return made;
  };
  afterEach(async () => {
    for (const p of plugins.splice(0)) await p.close();
  });

  it('refuses to start without a provider when the plugin is not attached, and says what it needs', () => {
    expect(() => plugin().startLetterWorker()).to.throw(TypeError, 'startLetterWorker(provider) needs the provider');
  });

  it('runLetterWorker refuses the embedded store, whose letters live in the service process', () => {
    const p = plugin();
    const provider = providerFor(p, 'http://127.0.0.1:1');
    expect(() => runLetterWorker({ plugin: p, provider, signals: false })).to.throw(TypeError, 'runLetterWorker needs the plugin on Redis');
  });

  it('stopLetterWorker resolves once the letters in hand are done, and leaves the rest queued', async () => {
    const p = plugin({ concurrency: 2 });
    const finished: string[] = [];
    const release: (() => void)[] = [];
    p.letters.startWorker(async (letter) => {
      await new Promise<void>((resolve) => release.push(resolve));
      finished.push(letter.id);
      return 'sent';
    });
    for (const id of ['l1', 'l2', 'l3']) await p.letters.add(job(id));
    while (release.length < 2) await new Promise((r) => setTimeout(r, 5));

    let stopped = false;
    const stopping = p.stopLetterWorker().then(() => { stopped = true; });
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped, 'still waiting for the two letters in hand').to.equal(false);
    release.shift()!();
    await new Promise((r) => setTimeout(r, 10));
    expect(stopped).to.equal(false);
    release.shift()!();
    await stopping;
    expect(finished).to.deep.equal(['l1', 'l2']);
    // The third was never started and waits for the next worker.
    await new Promise((r) => setTimeout(r, 30));
    expect(release).to.have.length(0);
    expect(await p.letters.pending()).to.equal(1);
  });
});
