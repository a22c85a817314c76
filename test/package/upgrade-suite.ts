/**
 * The plugin's own upgrade from 0.1.0 (docs/upgrading.md): the host app from
 * the tarball, started over data of 0.1.0's key layout (tokens under their
 * value), with `layout01Adapter` from `oidc-signout-notify/adopt` as its
 * previousAdapter: the token issued before introspects active, the refresh
 * token refreshes, and the import moves the rest.
 */
import { expect } from 'chai';

import { oldPluginAdapter } from '../helpers/previous/layout-0-1.ts';
import { basic, mintSignIn, SITE } from './host-calls.ts';
import { hostService, type Installed } from './host-suites.ts';

const PREFIX = 'osn-upgrade:';

export function upgradeSuite(installed: Installed): void {
  describe('the host upgraded from 0.1.0 (its tokens under their value), with layout01Adapter', () => {
    let running: Awaited<ReturnType<typeof hostService>> | undefined;
    let issuer: string;
    const old = { access: '', refresh: '' };

    before(async () => {
      // What 0.1.0 wrote when oidc-provider issued a sign-in's tokens.
      Object.assign(old, await mintSignIn(oldPluginAdapter(installed.db.client, PREFIX), installed.signingKey));
      expect(await installed.db.client.exists(`${PREFIX}AccessToken:{${old.access}}`)).to.equal(1);

      running = await hostService(installed, 'upgraded.js', { env: { HOST_KEY_PREFIX: PREFIX } });
      ({ issuer } = running);
    });
    after(() => running?.stop());

    const post = async (path: string, form: Record<string, string>) => {
      const res = await fetch(`${issuer}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
      return { status: res.status, json: await res.json() as Record<string, unknown> };
    };

    it('introspects the access token issued before the upgrade as active, and refreshes its refresh token', async () => {
      expect((await post('/token/introspection', { token: old.access })).json).to.deep.include({ active: true, sub: 'alice', client_id: SITE.client_id });
      const next = await post('/token', { grant_type: 'refresh_token', refresh_token: old.refresh });
      expect(next.status, JSON.stringify(next.json)).to.equal(200);
      expect((await post('/token/introspection', { token: next.json.access_token as string })).json).to.deep.include({ active: true, sub: 'alice' });
      // Moved: the old key is gone (after the move's grace period), the token lives under its hash.
      const deadline = Date.now() + 10_000;
      while ((await installed.db.client.exists(`${PREFIX}AccessToken:{${old.access}}`)) === 1) {
        if (Date.now() > deadline) throw new Error('0.1.0\'s key was not removed');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await post('/token/introspection', { token: old.access })).json).to.deep.include({ active: true });
    });
  });
}
