/**
 * Passkeys (issue 15 item 1) in Chromium with its virtual authenticator
 * (DevTools protocol: WebAuthn.enable, WebAuthn.addVirtualAuthenticator with
 * resident keys and user verification), against the reference provider on
 * http://localhost (a secure context with a domain as RP ID; browsers refuse
 * 127.0.0.1 as one) and a relying site that signs in with openid-client.
 *
 * One story in four steps: a passkey added, used and removed; an account with a passkey only;
 * failed assertions; and the log of all that, without credential material.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';

import { t } from '../../src/i18n/index.ts';
import { PHONE } from '../helpers/axe.ts';
import { mark, problems, step, type Chromium } from '../helpers/browser.ts';
import { passkeySteps, startPasskeysWorld, virtualAuthenticator } from '../helpers/passkeys-browser.ts';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';

import { documentedFetch } from '../helpers/openapi.ts';
import { discover, notifyAs, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('passkeys in Chromium with its virtual authenticator', function () {
  this.timeout(180_000);

  let h: Harness;
  let client: ClientMetadata;
  let chromium: Chromium;
  let logged: string[];
  /** Credential material seen in the browser: never in a log. */
  const material: string[] = [];

  const world = setUp(() => startPasskeysWorld('passkeys-browser'), (started) => ({ h, client, chromium, logged } = started));
  const { startAtSite, backAtSite, signInByCode, withoutAutofill, signOutOfService, storedPasskey, notice } = passkeySteps(world);

  it('adds a passkey in the console, signs out, signs back in with it through the site, and removes it', async () => {
    const from = mark(chromium.log);
    // The site polls Shared Signals for credential changes (the reference provider's console tells them).
    const { access_token: ssf } = await oidc.clientCredentialsGrant(await discover(h, client), { scope: 'ssf.manage' });
    const ssfCall = async (path: string, body: unknown) => documentedFetch(`${h.issuer}${path}`, {
      method: 'POST', headers: { authorization: `Bearer ${ssf}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    expect((await ssfCall('/ssf/stream', { events_requested: ['https://schemas.openid.net/secevent/caep/event-type/credential-change'], delivery: { method: 'urn:ietf:rfc:8936' } })).status).to.equal(201);
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const auth = await virtualAuthenticator(context, page);
      const first = await step(chromium.log, 'sign in by code', () => signInByCode(page, 'pia@example.com'));

      // The console: add a passkey with a name.
      await page.goto(`${h.issuer}/console`);
      const section = page.getByRole('region', { name: t('en', 'console.passkeys.title') });
      expect(await section.innerText()).to.include(t('en', 'console.passkeys.empty'));
      await section.getByLabel(t('en', 'console.passkeys.new_name')).fill('Test laptop');
      await section.getByRole('button', { name: t('en', 'console.passkeys.add') }).click();
      expect(await step(chromium.log, 'added', () => notice(page))).to.equal(t('en', 'console.passkeys.notice.added'));
      expect(await page.getByRole('heading', { level: 3, name: 'Test laptop' }).count()).to.equal(1);
      expect(await section.innerText()).to.include(`${t('en', 'console.passkeys.last_used')}\n${t('en', 'console.passkeys.never_used')}`);
      const created = await auth.credentials();
      expect(created).to.have.length(1);
      material.push(Buffer.from(created[0]!.credentialId, 'base64').toString('base64url'));
      const stored = await storedPasskey(String(first.sub));
      material.push(stored.id, JSON.parse((await h.reference.plugin.store.hgetall(`${h.prefix}account:{${first.sub}}:passkeys`))[stored.id]!).publicKey);
      expect(created[0]!.isResidentCredential).to.equal(true);
      expect(Buffer.from(created[0]!.userHandle!, 'base64').toString()).to.equal(first.sub);

      // Rename it.
      await section.getByLabel(`${t('en', 'console.passkeys.rename_label')} — Test laptop`).fill('Work laptop');
      await section.getByRole('button', { name: t('en', 'console.passkeys.rename') }).click();
      expect(await notice(page)).to.equal(t('en', 'console.passkeys.notice.renamed'));

      // Signed out of the service, the site's next sign-in asks again: the
      // address field offers the passkey (autofill), the person picks it,
      // the authenticator checks them (user verification) and signs.
      await signOutOfService(page);
      const counted = (await auth.credentials())[0]!.signCount;
      const posted: string[] = [];
      page.on('request', (r) => { if (r.method() === 'POST') posted.push(new URL(r.url()).pathname); });
      const flow = await startAtSite(page);
      const again = await step(chromium.log, 'passkey sign-in', () => backAtSite(page, flow));
      // Not silent: the sign-in page asked, the authenticator answered a fresh challenge.
      expect(posted.filter((p) => p.startsWith('/interaction/')).map((p) => p.replace(/^\/interaction\/[\w-]+/, ''))).to.deep.equal(['/passkey/options', '/passkey', '/confirm']);
      expect(again.sub).to.equal(first.sub);
      expect((await auth.credentials())[0]!.signCount, 'the authenticator signed again').to.be.greaterThan(counted);

      // Last used is shown; remove it after the confirmation.
      await page.goto(`${h.issuer}/console`);
      expect(await section.innerText()).to.not.include(t('en', 'console.passkeys.never_used'));
      await section.getByRole('link', { name: t('en', 'console.passkeys.remove', { name: 'Work laptop' }) }).click();
      await page.getByRole('heading', { level: 1, name: t('en', 'console.passkeys.remove_title', { name: 'Work laptop' }) }).waitFor();
      await page.getByRole('button', { name: t('en', 'console.passkeys.remove_submit', { name: 'Work laptop' }) }).click();
      expect(await notice(page)).to.equal(t('en', 'console.passkeys.notice.removed'));
      expect(await section.innerText()).to.include(t('en', 'console.passkeys.empty'));

      // The removed passkey no longer signs in: a clear error, every way
      // still offered, and the browser is told to forget it (WebAuthn signal).
      await signOutOfService(page);
      await startAtSite(page);
      const alert = page.locator('#signin-error');
      await alert.waitFor();
      expect(await alert.innerText()).to.equal(t('en', 'passkey.error.unknown'));
      expect(await page.getByLabel('Email address').count()).to.equal(1);
      await page.waitForFunction('true');
      expect(await auth.credentials(), 'the authenticator forgot the passkey').to.deep.equal([]);

      // The site heard of both: credential-change create, then delete, in its subject for the person.
      let polled: Record<string, string> = {};
      for (let i = 0; i < 100 && Object.keys(polled).length < 2; i += 1) {
        polled = (await (await ssfCall('/ssf/poll', { maxEvents: 10, returnImmediately: true })).json() as { sets: Record<string, string> }).sets;
        if (Object.keys(polled).length < 2) await new Promise((r) => setTimeout(r, 50));
      }
      const changes = Object.values(polled).map((set) => decodeJwt(set)).sort((x, y) => Number(x.iat) - Number(y.iat));
      const change = (set: Record<string, unknown>) => Object.values(set.events as Record<string, Record<string, unknown>>)[0]!;
      expect(changes.map((set) => [set.sub_id, change(set).change_type, change(set).friendly_name]).sort((x, y) => String(x[1]).localeCompare(String(y[1])))).to.deep.equal([
        [{ format: 'iss_sub', iss: h.issuer, sub: first.sub }, 'create', 'Test laptop'],
        [{ format: 'iss_sub', iss: h.issuer, sub: first.sub }, 'delete', 'Work laptop'],
      ]);
    } finally {
      await context.close();
    }
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
  });

  it('creates an account with a passkey only: no address, no_email at /api/notify, the inbox fills; its last passkey cannot be removed', async () => {
    const from = mark(chromium.log);
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      await virtualAuthenticator(context, page);
      const flow = await startAtSite(page);
      await page.getByRole('link', { name: t('en', 'login.passkey_signup') }).click();
      await page.getByRole('heading', { level: 1, name: t('en', 'passkey.signup.title') }).waitFor();
      await page.getByLabel(t('en', 'passkey.signup.name')).fill('Quinn');
      await page.getByRole('button', { name: t('en', 'passkey.signup.submit') }).click();
      const claims = await step(chromium.log, 'sign-up', () => backAtSite(page, flow));
      expect(claims).to.not.have.property('email');
      const account = await h.reference.accounts.get(String(claims.sub));
      expect(account).to.include({ name: 'Quinn', locale: 'en' });
      expect(account).to.not.have.property('email');

      const letters = h.smtp.letters.length;
      const answer = await notifyAs(h, client, { sub: claims.sub, category: 'transactional', title: 'Welcome, Quinn', body: 'Your first order is on its way.' });
      expect(answer).to.deep.equal({ status: 202, body: { inApp: true, email: false, skipped: 'no_email' } });

      await page.goto(`${h.issuer}/console`);
      expect(await page.locator('header .who').innerText()).to.equal(t('en', 'console.signed_in_as', { email: 'Quinn' }));
      expect(await page.getByRole('region', { name: t('en', 'console.inbox.title') }).innerText()).to.include('Welcome, Quinn');
      const section = page.getByRole('region', { name: t('en', 'console.passkeys.title') });
      expect(await section.innerText()).to.include(t('en', 'console.passkeys.intro_no_email')).and.include(t('en', 'console.passkeys.only_way'));
      expect(await section.getByRole('link', { name: /^Remove / }).count()).to.equal(0);
      // Asked anyway, the service refuses it with a clear message.
      const { id: key } = await storedPasskey(String(claims.sub));
      await page.goto(`${h.issuer}/console/passkeys/${encodeURIComponent(key!)}/remove`);
      expect(await page.getByRole('alert').innerText()).to.equal(t('en', 'console.passkeys.notice.last'));
      expect(await page.getByRole('button', { name: /^Remove / }).count()).to.equal(0);
      await page.goto(`${h.issuer}/console`);
      const csrf = await page.locator('#passkey-add input[name=csrf]').getAttribute('value');
      await page.evaluate(`(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = ${JSON.stringify(`/console/passkeys/${encodeURIComponent(key!)}/remove`)};
        const input = document.createElement('input');
        input.name = 'csrf';
        input.value = ${JSON.stringify(csrf)};
        form.append(input);
        document.body.append(form);
        form.submit();
      })()`);
      expect(await notice(page)).to.equal(t('en', 'console.passkeys.notice.last'));
      expect(Object.keys(await h.reference.plugin.store.hgetall(`${h.prefix}account:{${claims.sub}}:passkeys`))).to.deep.equal([key]);
      await new Promise((r) => setTimeout(r, 200));
      expect(h.smtp.letters.length, 'no letter for an account without an address').to.equal(letters);

      // Signed out, the person comes back by pressing "Sign in with a passkey".
      await signOutOfService(page);
      await withoutAutofill(page);
      const back = await startAtSite(page);
      let signed = '';
      page.on('request', (r) => { if (r.method() === 'POST' && /\/passkey$/.test(r.url())) signed = r.postDataJSON()?.response ?? new URLSearchParams(r.postData() ?? '').get('response') ?? ''; });
      await page.getByRole('button', { name: t('en', 'login.passkey') }).click();
      expect((await backAtSite(page, back)).sub).to.equal(claims.sub);

      // The signed answer is good for its challenge only: replayed into the next sign-in, refused.
      expect(signed).to.include('"type":"public-key"');
      await signOutOfService(page);
      await startAtSite(page);
      await page.evaluate(`(() => {
        const form = document.getElementById('passkey-signin');
        form.elements.response.value = ${JSON.stringify(signed)};
        form.submit();
      })()`);
      await page.locator('#signin-error').waitFor();
      expect(await page.locator('#signin-error').innerText()).to.equal(t('en', 'passkey.error.expired'));
    } finally {
      await context.close();
    }
    expect(problems(chromium.log, from), 'CSP violations or page errors').to.deep.equal([]);
  });

  it('a failed assertion (a credential the service does not have, a known one signed with the wrong key) gives a clear error and counts against the IP', async () => {
    const context = await chromium.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      const auth = await virtualAuthenticator(context, page);
      const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
      const addCredential = (credentialId: Buffer, userHandle: string) => auth.cdp.send('WebAuthn.addCredential', {
        authenticatorId: auth.id,
        credential: {
          credentialId: credentialId.toString('base64'), isResidentCredential: true, rpId: 'localhost',
          privateKey: p256(), userHandle: Buffer.from(userHandle).toString('base64'), signCount: 10,
        },
      });
      const checks = async () => Number(await h.redis!.get(`${h.prefix}rate:login-check-ip:{127.0.0.1}`) ?? 0);
      await withoutAutofill(page);

      // A passkey made elsewhere: nobody here has it.
      await addCredential(randomBytes(32), 'stranger');
      const before = await checks();
      await startAtSite(page);
      await page.getByRole('button', { name: t('en', 'login.passkey') }).click();
      await page.locator('#signin-error').waitFor();
      expect(await page.locator('#signin-error').innerText()).to.equal(t('en', 'passkey.error.unknown'));
      expect(await checks()).to.equal(before + 1);

      // A real account's credential id, with a key that is not its key: the signature fails.
      const owned = await storedPasskey();
      await auth.cdp.send('WebAuthn.clearCredentials', { authenticatorId: auth.id });
      await addCredential(Buffer.from(owned.id, 'base64url'), owned.accountId);
      await startAtSite(page);
      await page.getByRole('button', { name: t('en', 'login.passkey') }).click();
      await page.locator('#signin-error').waitFor();
      expect(await page.locator('#signin-error').innerText()).to.equal(t('en', 'passkey.error.invalid'));
      expect(await checks()).to.equal(before + 2);
      expect(new URL(page.url()).pathname).to.match(/^\/interaction\/[\w-]+\/passkey$/);
    } finally {
      await context.close();
    }
  });

  it('logs passkeys added, used, removed and failing, without credential material', () => {
    const text = logged.join('\n');
    for (const line of ['passkey added', 'signed in with a passkey', 'passkey removed', 'passkey sign-in failed', 'account created with a passkey']) expect(text).to.include(line);
    expect(material.length).to.equal(3);
    for (const value of material) expect(text).to.not.include(value);
  });
});
