/**
 * Theft of a refresh token (loss of access): a rotated token presented again revokes the chain,
 * and the event reaches the log, the provider's listeners and plugin.on listeners.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';
import { Agent } from '../helpers/agent.ts';
import { lossOfAccessCalls, startLossOfAccess, type Line } from '../helpers/loss-of-access.ts';
import { oauthError, signIn, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

/** The States and transitions rows in which a site loses access (spec), end to end. */
describe('loss of access: Block site, theft of a refresh token, organization removal', () => {
  let h: Harness;
  let lines: Line[];
  let a: oidc.Configuration;

  setUp(() => startLossOfAccess('loss-theft'), (started) => ({ h, lines, a } = started));
  const { introspect, accountId } = lossOfAccessCalls(() => h);

  describe('theft of a refresh token', () => {
    it('a rotated refresh token presented again revokes the chain; the event is logged with client, account and grant', async () => {
      const { tokens } = await signIn(h, a, new Agent(), 'theft1@example.com');
      const events: unknown[] = [];
      h.reference.provider.on('signout_notify.replay_detected' as never, (e: unknown) => events.push(e));
      const first = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
      // The site got its answer and refreshed again (until then the reuse leeway would answer the old token again).
      const rotated = await oidc.refreshTokenGrant(a, first.refresh_token!);
      const from = lines.length;

      // The thief (or the victim, whichever comes second) presents an old one.
      expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
      expect(await oauthError(oidc.refreshTokenGrant(a, rotated.refresh_token!))).to.equal('invalid_grant');
      expect(await introspect(a, rotated.access_token)).to.deep.equal({ active: false });

      const grantId = (await h.reference.plugin.adapter.factory('AccessToken').find(tokens.access_token))?.grantId;
      expect(grantId, 'the access token died with its grant').to.equal(undefined);
      const report = lines.slice(from).filter((l) => l.message === 'refresh token reuse detected: grant revoked');
      expect(report).to.have.length(1);
      expect(report[0]!.level).to.equal('warn');
      expect(report[0]!.fields).to.include({ model: 'RefreshToken', clientId: 'loss-a', accountId: await accountId('theft1@example.com') });
      expect(report[0]!.fields!.grantId).to.be.a('string').and.have.length.greaterThan(10);
      expect(events).to.have.length(1);
      // No token value reaches the log.
      expect(JSON.stringify(lines)).to.not.include(tokens.refresh_token!).and.not.include(first.refresh_token!).and.not.include(rotated.refresh_token!);
    });

    it('reaches plugin.on listeners too; one that throws is logged and the answer stays invalid_grant; the function on() returns removes a listener', async () => {
      const { tokens } = await signIn(h, a, new Agent(), 'theft2@example.com');
      const seen: ReplayEvent[] = [];
      const removed: ReplayEvent[] = [];
      const stopRemoved = h.reference.plugin.on(REPLAY_EVENT, (e) => removed.push(e));
      stopRemoved();
      const stopSeen = h.reference.plugin.on(REPLAY_EVENT, (e) => seen.push(e));
      const stopThrowing = h.reference.plugin.on(REPLAY_EVENT, () => { throw new Error('a bug in the host'); });
      const onProvider: unknown[] = [];
      const providerListener = (e: unknown) => onProvider.push(e);
      h.reference.provider.on(REPLAY_EVENT as never, providerListener);
      try {
        const rotated = await oidc.refreshTokenGrant(a, tokens.refresh_token!);
        await oidc.refreshTokenGrant(a, rotated.refresh_token!);
        const from = lines.length;
        expect(await oauthError(oidc.refreshTokenGrant(a, tokens.refresh_token!))).to.equal('invalid_grant');
        expect(seen).to.have.length(1);
        expect(seen[0]).to.include({ model: 'RefreshToken', clientId: 'loss-a', accountId: await accountId('theft2@example.com') });
        expect(removed).to.deep.equal([]);
        // The throwing listener does not keep the provider's listeners from hearing it.
        expect(onProvider).to.deep.equal(seen);
        const logged = lines.slice(from).filter((l) => l.message === 'an event listener threw');
        expect(logged.map((l) => [l.level, l.fields])).to.deep.equal([['error', { event: REPLAY_EVENT, reason: 'a bug in the host' }]]);
      } finally {
        stopSeen();
        stopThrowing();
        h.reference.provider.off(REPLAY_EVENT as never, providerListener);
      }
    });
  });
});
