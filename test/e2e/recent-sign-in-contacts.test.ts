/**
 * The page before a fresh sign-in (GET /console/sign-in-again) for a host
 * whose contacts say less than the reference provider's, and a person whose
 * session came from the store before the switch (no language recorded at a
 * sign-in here): the browser's language, the account named by what is known.
 */
import { expect } from 'chai';
import type * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent } from '../helpers/agent.ts';
import { sessionCookie, signedInAgo } from '../helpers/recent-sign-in.ts';
import { discover, signIn, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { site } from '../helpers/upstream-sign-in.ts';

describe('the page before the sign-in, for a host whose contacts say less than the reference provider\'s', function () {
  this.timeout(60_000);
  // What the host's contacts answer for everybody: nothing known, or a name without an address.
  const answer: { contact: { name?: string } | undefined } = { contact: undefined };
  let h: Harness;
  let config: oidc.Configuration;
  setUp(async () => {
    const harness = await startHarness('recent-sign-in-contacts', { clients: [site], plugin: { contacts: async () => answer.contact } });
    return Object.assign(harness, { config: await discover(harness, site) });
  }, (started) => ({ h, config } = { h: started, config: started.config }));

  /** As for a person whose session came from the store before the switch: no language recorded at a sign-in here (docs/redis-keys.md's prefs key). */
  const noLanguageRecorded = async (email: string) => {
    const { accountId } = (await h.reference.accounts.findByEmail(email))!;
    expect(await h.redis!.del(`${h.prefix}account:{${accountId}}:prefs`)).to.equal(1);
  };
  const pageFor = async (agent: Agent, headers: Record<string, string> = {}) => {
    await signedInAgo(h.reference.provider, sessionCookie(agent, h.issuer), 600);
    return agent.request('GET', `${h.issuer}/console/sign-in-again?action=add_passkey&back=%2Fconsole`, undefined, headers);
  };

  it('a person the contacts do not know, signed in before the switch: the page in the browser\'s language, naming no account', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'unknown@example.com');
    await noLanguageRecorded('unknown@example.com');
    answer.contact = undefined;
    const page = await pageFor(agent, { 'accept-language': 'de-DE,de;q=0.9' });
    expect(page.status).to.equal(200);
    expect(page.body).to.include('<html lang="de"').and.include(t('de', 'reauth.why.add_passkey')).and.not.include('unknown@example.com');
  });

  it('a contact with a name and no address: the page names the account by its name', async () => {
    const agent = new Agent();
    await signIn(h, config, agent, 'named@example.com');
    await noLanguageRecorded('named@example.com');
    answer.contact = { name: 'Pat Example' };
    const page = await pageFor(agent);
    expect(page.status).to.equal(200);
    expect(page.body).to.include('Pat Example').and.include('<html lang="en"');
  });
});
