/**
 * The README's Koa host (app.js) as written: the provider mounted with
 * koa-mount into the host's Koa app, the host's interaction routes ahead of
 * the mount, the host's features, claims and ttl kept by configure(). And
 * the same app without its `app.keys` line: attach() warns at the first
 * request, naming the fix, and the sign-in fails as the warning says.
 * Registered by test/package/consumer.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor } from '../helpers/agent.ts';
import { freePort } from '../helpers/net.ts';
import { oauthError } from '../helpers/reference.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';
import { readmeBlock, startHostProcess, type HostProcess } from './app.ts';
import { SITE, discover, hostEnv, isCallback, signIn } from './host-calls.ts';
import type { Installed } from './host-suites.ts';

const WARNING = /MOUNTED IN A KOA APP WITHOUT app\.keys.*Set app\.keys = cookies\.keys/;

export function koaHostSuite(installed: Installed): void {
  describe('the README\'s Koa host (app.js): the provider mounted with koa-mount, the host\'s interaction routes ahead of it', () => {
    let smtp: SmtpSink;
    const started: HostProcess[] = [];

    before(async () => {
      smtp = await startSmtpSink();
    });
    after(async () => {
      for (const p of started) p.child.kill('SIGTERM');
      await Promise.all(started.map((p) => p.exited));
      await smtp?.close();
    });

    async function start(script: string) {
      const port = await freePort();
      const issuer = `http://127.0.0.1:${port}`;
      const app = startHostProcess(installed.app, process.execPath, script, { ...hostEnv(issuer, port, installed.db.url, smtp, installed.signingKey), HOST: '127.0.0.1' });
      started.push(app);
      installed.processes.push(app);
      await app.waitFor(/^listening on /);
      return { app, issuer };
    }

    it('with app.keys: signs a person in through the host\'s interaction and out with id_token_hint; the host\'s features, claims and ttl hold; no warning', async () => {
      const { app, issuer } = await start('app.js');
      const config = await discover(issuer);
      const meta = config.serverMetadata();
      expect(meta.end_session_endpoint).to.equal(`${issuer}/session/end`);
      // The host's own settings passed through configure(): its feature, its claims (with the plugin's), its access token lifetime.
      expect(meta.claims_parameter_supported).to.equal(true);
      expect(meta.claims_supported).to.include.members(['sub', 'email', 'email_verified', 'acr', 'amr', 'auth_time']);

      const agent = new Agent();
      const tokens = await signIn(config, agent, 'alice');
      expect(tokens.expires_in).to.equal(600);
      expect(tokens.claims()!.sub).to.equal('alice');

      const url = oidc.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token!, post_logout_redirect_uri: SITE.post_logout_redirect_uris[0]!, state: 'koa-bye',
      });
      const page = await agent.get(url.href);
      expect(page.status).to.equal(200);
      const res = await agent.submit(page, formFor(page.body, '/session/end/confirm'), { logout: 'yes' });
      expect([res.status, res.location]).to.deep.equal([303, `${SITE.post_logout_redirect_uris[0]}?state=koa-bye`]);
      expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');

      expect(app.lines.filter((l) => /MOUNTED IN A KOA APP|devInteractions/.test(l))).to.deep.equal([]);
    });

    it('without app.keys: attach() warns at the first request, naming the fix, and the host\'s interaction finds no interaction (400)', async () => {
      const block = readmeBlock('app.js');
      const withoutKeys = block.replace(/^app\.keys = .*\n/m, '');
      expect(withoutKeys).to.not.equal(block);
      writeFileSync(join(installed.app.dir, 'app-without-keys.js'), withoutKeys);
      const { app, issuer } = await start('app-without-keys.js');
      expect(app.lines.filter((l) => WARNING.test(l))).to.deep.equal([]);

      const config = await discover(issuer);
      await app.waitFor(WARNING);
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: SITE.redirect_uris[0]!, scope: 'openid', state: oidc.randomState(),
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const agent = new Agent();
      const loginPage = await agent.follow(await agent.get(url.href), isCallback);
      expect(loginPage.status).to.equal(400);
      // Once per app, however many requests.
      expect(app.lines.filter((l) => WARNING.test(l))).to.have.length(1);
    });
  });
}
