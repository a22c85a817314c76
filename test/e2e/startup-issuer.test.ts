/**
 * `node examples/start.ts` with an issuer that is not on localhost: letters
 * need SMTP_URL (or MAIL_OUTBOX=log), an https issuer needs TRUST_PROXY, and
 * back-channel logout reaches no private host.
 */
import { expect } from 'chai';

import { freePort } from '../helpers/net.ts';
import { exitWithin, REFUSAL_MS, start, stop, stopAll, waitForOutput } from '../helpers/start-process.ts';

describe('start.ts with an issuer that is not on localhost', function () {
  // Up to three starts a test, each up to REFUSAL_MS on a loaded machine.
  this.timeout(3 * REFUSAL_MS + 10_000);
  after(stopAll);

  it('refuses to start without SMTP_URL (letters hold sign-in codes) unless MAIL_OUTBOX=log', async () => {
    const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test' });
    const { code } = await exitWithin(run, REFUSAL_MS);
    expect(code).to.equal(1);
    expect(run.stderr().trim()).to.equal('Configuration error: environment: SMTP_URL: required for the issuer https://id.example.test (letters hold sign-in codes); set MAIL_OUTBOX=log to print them to the log instead');
  });

  it('with MAIL_OUTBOX=log starts, warns loudly, and lets back-channel logout reach no private host (the demo site on localhost included)', async () => {
    const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', TRUST_PROXY: '1' });
    await waitForOutput(run, /^Identity provider listening on https:\/\/id\.example\.test /m);
    // stderr's lines may come after stdout's: waited for, not read at once.
    await waitForOutput(run, /Back-channel logout to the demo site/);
    expect(run.stderr()).to.include('LETTERS ARE PRINTED TO THE LOG');
    expect(run.stderr()).to.include('Back-channel logout to the demo site (localhost) is refused for this issuer; set ALLOW_PRIVATE_FETCH_HOSTS=localhost to allow it.');
    expect(run.output()).to.not.include('may reach these hosts');
    await stop(run);
  });

  it('refuses an https issuer without TRUST_PROXY: it serves plain HTTP, and its cookies would go out without Secure', async () => {
    for (const trust of [{}, { TRUST_PROXY: '0' }, { TRUST_PROXY: 'false' }] as Record<string, string>[]) {
      const run = start({ PORT: String(await freePort()), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', ...trust });
      const { code } = await exitWithin(run, REFUSAL_MS);
      expect({ trust, code, stderr: run.stderr().trim() }).to.deep.equal({
        trust, code: 1,
        stderr: 'Configuration error: environment: TRUST_PROXY: required for the https issuer https://id.example.test: this server speaks plain HTTP, so TLS ends at a proxy in front, and without trusting it cookies go out without Secure; set the number of proxies, or their addresses',
      });
    }
  });

  it('with TRUST_PROXY sets Secure on the cookies of a request the proxy received over TLS, and says nothing of Secure', async () => {
    const port = await freePort();
    const run = start({ PORT: String(port), DEMO_PORT: String(await freePort()), ISSUER: 'https://id.example.test', MAIL_OUTBOX: 'log', TRUST_PROXY: '1' });
    await waitForOutput(run, /^Identity provider listening on /m);
    // The console sends the browser to sign in: the authorization request sets the interaction's cookies.
    const console = await fetch(`http://localhost:${port}/console`, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
    const auth = new URL(console.headers.get('location')!);
    expect(auth.origin).to.equal('https://id.example.test');
    const cookiesOf = async (headers: Record<string, string>) => {
      const res = await fetch(`http://localhost:${port}${auth.pathname}${auth.search}`, { redirect: 'manual', headers });
      expect(res.status).to.equal(303);
      return res.headers.getSetCookie().map((c) => c.split(';').map((part) => part.trim().toLowerCase()).includes('secure'));
    };
    const overTls = await cookiesOf({ 'x-forwarded-proto': 'https' });
    expect(overTls.length).to.be.at.least(1);
    expect(overTls.every(Boolean), 'every cookie Secure').to.equal(true);
    // Without the proxy's word, a plain HTTP request gets none.
    expect((await cookiesOf({})).some(Boolean)).to.equal(false);
    expect(run.output()).to.not.include('COOKIES WITHOUT Secure');
    await stop(run);
  });

  it('starts an https issuer on loopback (development) without TRUST_PROXY, and the plugin warns loudly about Secure', async () => {
    const port = await freePort();
    const run = start({ PORT: String(port), DEMO_PORT: String(await freePort()), ISSUER: `https://localhost:${port}` });
    await waitForOutput(run, /^Identity provider listening on /m);
    expect(run.stderr()).to.include(`oidc-signout-notify: COOKIES WITHOUT Secure BEHIND A TLS PROXY: the issuer https://localhost:${port} is https but provider.proxy is not set`);
    await stop(run);
  });
});
