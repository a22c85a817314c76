/**
 * An organization administrator removes a member (loss of access): the member loses the
 * organization's sites at once, at refresh, introspection, sign-in and /api/notify; only admins may remove.
 */
import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { Agent } from '../helpers/agent.ts';
import type { BackchannelReceiver } from '../helpers/backchannel.ts';
import { lossOfAccessCalls, startLossOfAccess, type Line } from '../helpers/loss-of-access.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { oauthError, signIn, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

/** The States and transitions rows in which a site loses access (spec), end to end. */
describe('loss of access: Block site, theft of a refresh token, organization removal', () => {
  let h: Harness;
  let receiver: BackchannelReceiver;
  let lines: Line[];
  let orgSite: ClientMetadata;
  let a: oidc.Configuration;
  let b: oidc.Configuration;
  let org: oidc.Configuration;

  setUp(() => startLossOfAccess('loss-org'), (started) => ({ h, receiver, lines, orgSite, a, b, org } = started));
  const { introspect, api, authorize, callbackParams, accountId } = lossOfAccessCalls(() => h);

  describe('an organization administrator removes a member', () => {
    it('answers the organization site\'s /api/notify for a removed member 403 not_connected, and writes nothing to their inbox', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'ida@acme.example');
      const idaId = await accountId('ida@acme.example');
      const notifyOrg = (title = 'Hello') => documentedFetch(`${h.issuer}/api/notify`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${orgSite.client_id}:${orgSite.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sub: tokens.claims()!.sub, category: 'product', title, body: 'A message.' }),
      });
      // An organization's site reads the membership between the site's step and the person's, so that a
      // removed member's inbox is never written: the site's script, the membership, then the person's
      // script beside the host's contact lookup, 4 commands in 3 round trips on a single node and a
      // Cluster alike (another site's: 1 and 2, notify-results.test.ts).
      const { store } = h.reference.plugin;
      await h.reference.plugin.stopLetterWorker(); // it shares the store: idle while counting
      try {
        // Not counted: a Cluster node loads a script on its first use there (EVALSHA, then EVAL).
        expect((await notifyOrg('First')).status).to.equal(202);
        const before = { commands: store.commandsSent, trips: store.roundTrips };
        expect((await notifyOrg()).status).to.equal(202);
        expect({ commands: store.commandsSent - before.commands, trips: store.roundTrips - before.trips }).to.deep.equal({ commands: 4, trips: 3 });
      } finally {
        h.reference.plugin.startLetterWorker();
      }
      expect(await h.reference.plugin.removeMember('acme', idaId)).to.equal('removed');
      const refused = await notifyOrg();
      expect([refused.status, await refused.json()]).to.deep.equal([403, { error: 'not_connected', error_description: 'this person has not signed in to this site, or has revoked its access' }]);
      expect((await h.reference.plugin.inbox.page(idaId, undefined, 10))!.items.map((item) => item.title)).to.deep.equal(['Hello', 'First']);
    });

    it('revokes the member at the organization’s sites at once and refuses the next sign-in with access_denied', async () => {
      const member = new Agent();
      const { tokens } = await signIn(h, org, member, 'ann@acme.example');
      const elsewhere = await signIn(h, b, member, 'ann@acme.example');
      const admin = new Agent();
      await signIn(h, org, admin, 'boss@acme.example');
      const annId = await accountId('ann@acme.example');
      const before = receiver.tokens.length;

      const list = await api(admin, 'GET', '/orgs/acme/members');
      expect(list.status).to.equal(200);
      expect(list.body).to.deep.include({ accountId: annId, email: 'ann@acme.example', admin: false, status: 'member' });

      expect((await api(admin, 'DELETE', `/orgs/acme/members/${annId}`)).status).to.equal(204);

      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await introspect(org, tokens.access_token)).to.deep.equal({ active: false });
      expect(receiver.tokens.length).to.equal(before + 1);
      expect((await receiver.verify(receiver.tokens.at(-1)!, h.issuer, 'loss-org')).sub).to.equal(tokens.claims()!.sub);
      // A site outside the organization keeps its access.
      expect((await introspect(b, elsewhere.tokens.access_token)).active).to.equal(true);

      // The member's service session lives, but the organization's site is closed to them.
      const again = await authorize(member, org);
      expect(callbackParams(again)).to.deep.include({
        error: 'access_denied',
        error_description: 'the account is not a member of the organization that owns this site',
        state: 'st-1',
      });
      const members = (await api(admin, 'GET', '/orgs/acme/members')).body as { accountId: string; status: string; removedAt?: string }[];
      const ann = members.find((m) => m.accountId === annId)!;
      expect(ann.status).to.equal('removed');
      expect(Date.parse(ann.removedAt!)).to.be.closeTo(Date.now(), 60_000);
      expect(ann.removedAt).to.equal(new Date(Date.parse(ann.removedAt!)).toISOString());
    });

    it('checks membership again at refresh and introspection, so a token that escaped the revocation still fails', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'bob@acme.example');
      // Only the removal is recorded: the grant and its tokens are left in place.
      expect(await h.reference.plugin.organizations.recordRemoval('acme', await accountId('bob@acme.example'))).to.equal('removed');
      expect(await introspect(org, tokens.access_token)).to.deep.equal({ active: false });
      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
    });

    it('is refused to anyone but the organization’s admins, and admins cannot be removed', async () => {
      const member = new Agent();
      await signIn(h, org, member, 'cy@acme.example');
      const cyId = await accountId('cy@acme.example');
      const bossId = await accountId('boss@acme.example');
      const denied = { status: 403, body: { error: 'access_denied', error_description: 'only the organization’s administrators may do this' } };
      expect(await api(member, 'GET', '/orgs/acme/members')).to.deep.include(denied);
      expect(await api(member, 'DELETE', `/orgs/acme/members/${cyId}`)).to.deep.include(denied);
      expect(await api(member, 'DELETE', `/orgs/nope/members/${cyId}`)).to.deep.include(denied);

      const admin = new Agent();
      await signIn(h, org, admin, 'boss@acme.example');
      expect(await api(admin, 'DELETE', `/orgs/acme/members/${bossId}`)).to.deep.include({ status: 400, body: { error: 'invalid_request', error_description: 'administrators are set in the configuration and cannot be removed here' } });
      expect(await api(admin, 'DELETE', '/orgs/acme/members/nobody')).to.deep.include({ status: 404, body: { error: 'not_found', error_description: 'no such member' } });
      expect(await api(admin, 'DELETE', `/orgs/acme/members/${cyId}`, { origin: 'https://evil.example' })).to.deep.include({ status: 403 });
      // cy is still a member after the refused requests.
      const { tokens } = await signIn(h, org, member, 'cy@acme.example');
      expect((await introspect(org, tokens.access_token)).active).to.equal(true);
    });

    it('never lets someone outside the organization sign in to its site', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'outsider@example.com');
      const res = await authorize(agent, org);
      expect(callbackParams(res)).to.deep.include({ error: 'access_denied', state: 'st-1' });
    });

    it('removes through the exported removeMember too; once, with one logout token (sub only: the site does not require sid)', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'eve@acme.example');
      const eveId = await accountId('eve@acme.example');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.removeMember('acme', eveId)).to.equal('removed');
      expect(await oauthError(oidc.refreshTokenGrant(org, tokens.refresh_token!))).to.equal('invalid_grant');
      const [token] = receiver.tokens.slice(before);
      expect(receiver.tokens.length - before).to.equal(1);
      const payload = await receiver.verify(token!, h.issuer, 'loss-org');
      expect([payload.sub, payload.sid]).to.deep.equal([tokens.claims()!.sub, undefined]);
      expect(await h.reference.plugin.removeMember('acme', eveId)).to.equal('already_removed');
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length - before).to.equal(1);
      expect(await h.reference.plugin.removeMember('acme', 'nobody')).to.equal('not_member');
    });

    it('logs each removal, a repeated one too (it heals a half-done earlier one), and nothing for someone who never was a member', async () => {
      await signIn(h, org, new Agent(), 'hal@acme.example');
      const halId = await accountId('hal@acme.example');
      let from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', halId)).to.equal('removed');
      const removed = { level: 'info', message: 'organization member removed', fields: { orgId: 'acme' } };
      expect(lines.slice(from).filter((l) => l.message !== 'site access revoked' && !l.message.startsWith('back-channel'))).to.deep.equal([removed]);
      from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', halId)).to.equal('already_removed');
      expect(lines.slice(from)).to.deep.equal([removed]);
      from = lines.length;
      expect(await h.reference.plugin.removeMember('acme', 'nobody')).to.equal('not_member');
      expect(lines.slice(from)).to.deep.equal([]);
    });

    it('leaves the access of a member another organization owning the same site still counts', async () => {
      const { tokens } = await signIn(h, org, new Agent(), 'flo@acme.example');
      const floId = await accountId('flo@acme.example');
      const before = receiver.tokens.length;
      expect(await h.reference.plugin.removeMember('acme', floId)).to.equal('removed');
      expect((await oidc.refreshTokenGrant(org, tokens.refresh_token!)).access_token).to.be.a('string');
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.tokens.length).to.equal(before);
    });
  });
});
