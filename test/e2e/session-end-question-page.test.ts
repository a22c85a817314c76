/**
 * Sign-out of the service (/session/end): the question page, the site it names and the
 * language it speaks (the person's stored one, the browser's, ui_locales), and a pairwise site's hint.
 */
import { expect } from 'chai';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { escapeHtml } from '../../src/text/html.ts';
import { Agent, formFor } from '../helpers/agent.ts';
import { signIn, type Harness } from '../helpers/reference.ts';
import { sessionEndCalls, startSessionEnd } from '../helpers/session-end.ts';
import { setUp } from '../helpers/set-up.ts';

describe('sign-out of the service (/session/end)', () => {
  let h: Harness;
  let a: oidc.Configuration;
  let d: oidc.Configuration;

  setUp(() => startSessionEnd('session-end-question-page'), (started) => ({ h, a, d } = started));
  const { endSession } = sessionEndCalls(() => h);

  describe('the question page', () => {
    it('names the site that asked, by its name', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end12@example.com');
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.body).to.include(t('en', 'logout.site_asked', { clientName: 'Site end-a' }));
    });

    it('speaks the person\'s stored language over the browser\'s, and so does the page after "Stay signed in"', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'de';
      await signIn(h, a, agent, 'end13@example.com');
      agent.acceptLanguage = 'fr';
      const page = await endSession(agent, { client_id: 'end-a', ui_locales: 'fr' });
      expect(page.body).to.include('<html lang="de"');
      expect(page.body).to.include(escapeHtml(t('de', 'logout.stay')));
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.body).to.include('<html lang="de"');
      expect(res.body).to.include(escapeHtml(t('de', 'stayed.title')));
    });

    it('for a person with no stored language, speaks the browser\'s (Accept-Language), on both pages', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end14@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end14@example.com'))!;
      await h.redis!.hdel(`${h.prefix}account:{${accountId}}`, 'locale');
      agent.acceptLanguage = 'fr-CH, en;q=0.5';
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.body).to.include('<html lang="fr"');
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.body).to.include('<html lang="fr"');
      expect(res.body).to.include(escapeHtml(t('fr', 'stayed.title')));
    });

    it('for a person whose account the host no longer knows: asks without naming an address, and "Stay signed in" still ends on its page', async () => {
      const agent = new Agent();
      await signIn(h, a, agent, 'end20@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end20@example.com'))!;
      await h.redis!.del(`${h.prefix}account:{${accountId}}`);
      const page = await endSession(agent, { client_id: 'end-a' });
      expect(page.status).to.equal(200);
      expect(page.body).to.include(t('en', 'logout.stay'));
      expect(page.body).to.not.include('end20@example.com');
      const res = await agent.follow(await agent.submit(page, formFor(page.body, '/session/end/confirm')));
      expect(res.status).to.equal(200);
      expect(res.body).to.include(`<h1>${t('en', 'stayed.title')}</h1>`);
    });

    it('without a session, speaks ui_locales first, then Accept-Language', async () => {
      const agent = new Agent();
      agent.acceptLanguage = 'fr';
      expect((await endSession(agent, { ui_locales: 'de' })).body).to.include('<html lang="de"');
      expect((await endSession(agent)).body).to.include('<html lang="fr"');
    });

    it('with a hint from a pairwise site carrying the person as that site sees them: signs out without a question', async () => {
      const agent = new Agent();
      const { tokens } = await signIn(h, d, agent, 'end15@example.com');
      const { accountId } = (await h.reference.accounts.findByEmail('end15@example.com'))!;
      expect(tokens.claims()!.sub).to.not.equal(accountId);
      const page = await endSession(agent, { id_token_hint: tokens.id_token! });
      expect(page.body).to.include('<script>');
      expect(page.body).to.not.include(t('en', 'logout.stay'));
    });
  });
});
