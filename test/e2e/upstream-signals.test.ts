/**
 * Hearing an upstream (issue 36): a RISC transmitter written here from
 * Google's Cross-Account Protection documentation (test/helpers/risc-transmitter.ts)
 * pushes security event tokens to the reference provider's
 * `/upstream-signals/social` (RFC 8935), and an enterprise tool calls Global
 * Token Revocation. Through HTTP: the sign-ins through the upstream, the
 * site's tokens, the refusals and their codes, the person's letters. On
 * Redis, the embedded store, and the Cluster (CLUSTER_SUITE).
 */
import { randomBytes } from 'node:crypto';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { t } from '../../src/i18n/index.ts';
import { Agent } from '../helpers/agent.ts';
import { lettersTo } from '../helpers/notices.ts';
import { keysWithoutTtl } from '../helpers/redis.ts';
import { discover, signIn, siteClient } from '../helpers/reference.ts';
import { CAEP, RISC, startRiscTransmitter, type RiscTransmitter } from '../helpers/risc-transmitter.ts';
import { setUp } from '../helpers/set-up.ts';
import { startUpstreamSignIn, UPSTREAM, upstreamSteps, type UpstreamSignIn } from '../helpers/upstream-sign-in.ts';

const SERVICE = 'Sign-in service';
const GTR_SCOPE = 'global_token_revocation';
const toolClient = (id: string, scope: string): ClientMetadata => siteClient(id, { grant_types: ['client_credentials'], response_types: [], redirect_uris: [], post_logout_redirect_uris: [], scope });
const gtrTool = toolClient('gtr-tool', GTR_SCOPE);
const gtrOther = toolClient('gtr-other', GTR_SCOPE);
const gtrWithout = toolClient('gtr-without', 'ssf.read');

for (const embedded of [false, true]) describe(`upstream signals: RISC, CAEP and Global Token Revocation (${embedded ? 'embedded store' : 'Redis'})`, function () {
  this.timeout(120_000);

  let risc: RiscTransmitter;
  const world = setUp(async () => {
    risc = await startRiscTransmitter();
    const started = await startUpstreamSignIn(`upstream-signals-${embedded ? 'm' : 'r'}`, {
      signals: { issuer: risc.issuer, configurationUrl: risc.configurationUrl, allowUntypedSets: true },
    }, {
      embedded,
      clients: [gtrTool, gtrOther, gtrWithout],
      upstreamSignals: { globalTokenRevocation: { clients: ['gtr-tool', 'gtr-without'] } },
    });
    return { ...started, async close() { await started.close(); await risc.close(); } } satisfies UpstreamSignIn;
  });
  const { loginPage, toUpstream, upstreamLogin, signInThroughUpstream, openConsole } = upstreamSteps(world);
  /** The person's Linked accounts card, after signing in by emailed code (the upstream's way may be held). */
  async function linkedAccountsCard(email: string) {
    const agent = new Agent();
    await signIn(h(), world().config, agent, email);
    const page = await openConsole(agent);
    return page.body.slice(page.body.indexOf('id="linked-accounts"'));
  }
  const h = () => world().h;
  const plugin = () => h().reference.plugin;
  const AUD = 'reference-provider';
  const now = () => Math.floor(Date.now() / 1000);
  const jti = () => randomBytes(16).toString('hex');

  async function push(body: string, contentType = 'application/secevent+jwt') {
    const res = await fetch(`${h().issuer}/upstream-signals/${UPSTREAM.id}`, { method: 'POST', headers: { 'content-type': contentType, accept: 'application/json' }, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : undefined };
  }
  /** Google's SET for the upstream `sub` (no typ, the subject inside the event). */
  const googleSet = (type: string, sub: string, extra: Record<string, unknown> = {}, claims: Record<string, unknown> = {}) =>
    risc.sign({ iss: risc.issuer, aud: AUD, iat: now(), jti: jti(), events: risc.event(type, sub, extra), ...claims });
  const refresh = (config: oidc.Configuration, token: string) => oidc.refreshTokenGrant(config, token).then(() => 'ok', (err: { error?: string }) => err.error ?? 'failed');
  const accountOf = async (email: string) => (await h().reference.accounts.findByEmail(email))!.accountId;
  async function letters(email: string, subject: string, count: number) {
    const deadline = Date.now() + 10_000;
    while (lettersTo(h(), email, subject).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return lettersTo(h(), email, subject);
  }

  it('account-disabled (hijacking) from Google\'s format: every session and refresh token of the linked person ends, sign-in through the upstream is refused with a page saying why until account-enabled', async () => {
    world().upstream.people.set('hana', { email: 'hana@up.example', email_verified: true, name: 'Hana' });
    const { tokens } = await signInThroughUpstream(new Agent(), 'hana');
    const other = await signInThroughUpstream(new Agent(), 'hana');
    const accountId = await accountOf('hana@up.example');
    expect(await plugin().sessions.list(accountId)).to.have.length(2);

    const set = await googleSet(`${RISC}/account-disabled`, 'hana', { reason: 'hijacking' });
    expect(await push(set)).to.deep.equal({ status: 202, body: undefined });

    expect(await refresh(world().config, tokens.refresh_token!)).to.equal('invalid_grant');
    expect(await refresh(world().config, other.tokens.refresh_token!)).to.equal('invalid_grant');
    expect(await plugin().sessions.list(accountId)).to.deep.equal([]);
    const subject = t('en', 'notice.upstream_account_disabled.subject', { serviceName: SERVICE });
    expect(await letters('hana@up.example', subject, 1)).to.have.length(1);
    const recorded = await plugin().upstreamSignals.recent(UPSTREAM.id);
    expect(recorded[0]).to.include({ event: `${RISC}/account-disabled`, action: 'account', outcome: 'done', accountId });
    expect(recorded[0]!.jti).to.be.a('string').with.length(32);

    // Sign-in through the upstream is held, with the reason on the page, in the reader's language.
    const agent = new Agent();
    const { page } = await loginPage(agent);
    const { form } = await toUpstream(agent, page);
    const refused = await upstreamLogin(agent, form, 'hana');
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include(t('en', 'upstream.error.held', { name: UPSTREAM.name }));

    // Until the upstream says account-enabled.
    expect((await push(await googleSet(`${RISC}/account-enabled`, 'hana'))).status).to.equal(202);
    const again = await signInThroughUpstream(new Agent(), 'hana');
    expect(await refresh(world().config, again.tokens.refresh_token!)).to.equal('ok');
  });

  it('CAEP session-revoked (SSF 1.0: typed, top-level sub_id) ends only the sessions that signed in through the upstream, and tells the person once', async () => {
    world().upstream.people.set('ivo', { email: 'ivo@up.example', email_verified: true });
    const through = await signInThroughUpstream(new Agent(), 'ivo');
    const byCode = await signIn(h(), world().config, new Agent(), 'ivo@up.example');
    const accountId = await accountOf('ivo@up.example');
    expect(await plugin().sessions.list(accountId)).to.have.length(2);

    const set = await risc.sign({
      iss: risc.issuer, aud: [AUD, 'someone-else'], iat: now(), jti: jti(),
      sub_id: { format: 'iss_sub', iss: risc.issuer, sub: 'ivo' },
      events: { [`${CAEP}/session-revoked`]: { event_timestamp: now(), initiating_entity: 'policy' } },
    }, { typ: 'secevent+jwt' });
    expect((await push(set)).status).to.equal(202);

    expect(await refresh(world().config, through.tokens.refresh_token!)).to.equal('invalid_grant');
    expect(await refresh(world().config, byCode.tokens.refresh_token!)).to.equal('ok');
    expect(await plugin().sessions.list(accountId)).to.have.length(1);
    const subject = t('en', 'notice.upstream_sessions_ended.subject', { name: UPSTREAM.name });
    expect(await letters('ivo@up.example', subject, 1)).to.have.length(1);
    expect((await plugin().upstreamSignals.recent(UPSTREAM.id))[0]).to.include({ action: 'sessions', outcome: 'done', accountId, ended: 1 });
  });

  it('tokens-revoked marks the link and tells the person; nothing ends', async () => {
    world().upstream.people.set('lea', { email: 'lea@up.example', email_verified: true });
    const { tokens } = await signInThroughUpstream(new Agent(), 'lea');
    expect((await push(await googleSet(`${RISC}/tokens-revoked`, 'lea'))).status).to.equal(202);
    expect(await refresh(world().config, tokens.refresh_token!)).to.equal('ok');
    expect(await plugin().upstreamSignals.marked(UPSTREAM.id, 'lea')).to.include({ event: `${RISC}/tokens-revoked` });
    const subject = t('en', 'notice.upstream_credential_change.subject', { name: UPSTREAM.name });
    expect(await letters('lea@up.example', subject, 1)).to.have.length(1);
    // The person sees the mark with the link, and no hold.
    const card = await linkedAccountsCard('lea@up.example');
    expect(card).to.include('id="upstream-0-marked"').and.include(t('en', 'console.upstreams.marked_on', { name: `<bdi>${UPSTREAM.name}</bdi>` }));
    expect(card).to.not.include('id="upstream-0-held"');
  });

  describe('refusals, with nothing changed', () => {
    let refreshToken: string;
    let before: number;
    const disabled = (claims: Record<string, unknown> = {}) => ({ iss: risc.issuer, aud: AUD, iat: now(), jti: jti(), events: risc.event(`${RISC}/account-disabled`, 'jon', { reason: 'hijacking' }), ...claims });

    // Jon signs in through the upstream; every refusal below leaves his sign-in as it is.
    it('signs Jon in through the upstream', async () => {
      world().upstream.people.set('jon', { email: 'jon@up.example', email_verified: true });
      refreshToken = (await signInThroughUpstream(new Agent(), 'jon')).tokens.refresh_token!;
      before = (await plugin().upstreamSignals.recent(UPSTREAM.id)).length;
    });

    const cases: [string, () => Promise<{ status: number; body: unknown }>, number, string][] = [
      ['signed by a key the upstream never published (its kid)', async () => push(await risc.sign(disabled(), { key: await risc.strangerKey() })), 400, 'invalid_key'],
      ['signed by another key of an unknown kid', async () => push(await risc.sign(disabled(), { key: await risc.strangerKey(), kid: 'other' })), 400, 'invalid_key'],
      ['for another audience', async () => push(await risc.sign(disabled({ aud: 'another-service' }))), 400, 'invalid_audience'],
      ['from another issuer', async () => push(await risc.sign(disabled({ iss: 'https://accounts.example/' }))), 400, 'invalid_issuer'],
      ['with an expired iat (two days old)', async () => push(await risc.sign(disabled({ iat: now() - 2 * 86_400 }))), 400, 'invalid_request'],
      ['with a future iat', async () => push(await risc.sign(disabled({ iat: now() + 600 }))), 400, 'invalid_request'],
      ['with an unknown event only', async () => push(await risc.sign(disabled({ events: risc.event(`${RISC}/made-up`, 'jon') }))), 400, 'invalid_request'],
      ['typed as something else (typ JWT)', async () => push(await risc.sign(disabled(), { typ: 'JWT' })), 400, 'invalid_request'],
      ['without a jti', async () => push(await risc.sign(disabled({ jti: undefined }))), 400, 'invalid_request'],
      ['without events', async () => push(await risc.sign(disabled({ events: undefined }))), 400, 'invalid_request'],
      ['as a form', async () => push(await risc.sign(disabled()), 'application/x-www-form-urlencoded'), 400, 'invalid_request'],
      ['over the body limit', async () => push(`${await risc.sign(disabled())}${' '.repeat(17 * 1024)}`), 413, 'invalid_request'],
    ];
    for (const [name, send, status, err] of cases) {
      it(`refuses a SET ${name}: ${status} ${err}`, async () => {
        const res = await send();
        expect(res.status).to.equal(status);
        expect(res.body).to.include({ err });
        expect((res.body as { description: unknown }).description).to.be.a('string');
      });
    }

    it('refuses a replayed jti (the first one acknowledged)', async () => {
      const set = await risc.sign({ iss: risc.issuer, aud: AUD, iat: now(), jti: jti(), events: { [`${RISC}/verification`]: { state: 'check' } } });
      expect((await push(set)).status).to.equal(202);
      expect(await push(set)).to.deep.equal({ status: 400, body: { err: 'invalid_request', description: 'a SET with this jti was received already' } });
      before += 1;
    });

    it('acknowledges a subject linked to no account and drops it (no oracle)', async () => {
      const res = await push(await risc.sign({ ...disabled(), events: risc.event(`${RISC}/account-disabled`, 'nobody-here', { reason: 'hijacking' }) }));
      expect(res).to.deep.equal({ status: 202, body: undefined });
      // An address alone is no link: Jon's address names his account, not his link's subject at another upstream id.
      const byAddress = await risc.sign({ ...disabled(), events: { [`${RISC}/account-disabled`]: { subject: { subject_type: 'email', email: 'hana@up.example.evil' }, reason: 'hijacking' } } });
      expect((await push(byAddress)).status).to.equal(202);
      const recorded = await plugin().upstreamSignals.recent(UPSTREAM.id);
      expect(recorded.slice(0, 2).map((r) => r.outcome)).to.deep.equal(['unknown_subject', 'unknown_subject']);
      before += 2;
    });

    it('left Jon signed in, his link not held, and only the acknowledged SETs recorded', async () => {
      expect(await refresh(world().config, refreshToken)).to.satisfy((r: string) => r === 'ok');
      expect(await plugin().upstreamSignals.held(UPSTREAM.id, 'jon')).to.equal(undefined);
      expect(await plugin().upstreamSignals.recent(UPSTREAM.id)).to.have.length(before);
      expect(lettersTo(h(), 'jon@up.example', t('en', 'notice.upstream_account_disabled.subject', { serviceName: SERVICE }))).to.deep.equal([]);
    });

    it('gives no 5xx to 2,000 fuzzed bodies', async () => {
      const valid = await risc.sign(disabled({ aud: 'another-service' }));
      const b64 = (n: number) => randomBytes(n).toString('base64url');
      const seg = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const makers: (() => [string, string?])[] = [
        () => [randomBytes(Math.floor(Math.random() * 300)).toString('latin1')],
        () => [`${b64(20)}.${b64(80)}.${b64(64)}`],
        () => [valid.slice(0, Math.floor(Math.random() * valid.length))],
        () => { const i = Math.floor(Math.random() * valid.length); return [`${valid.slice(0, i)}${valid[i] === 'A' ? 'B' : 'A'}${valid.slice(i + 1)}`]; },
        () => [`${seg({ alg: ['none', 'HS256', 'RS256', 'ES256', 42][Math.floor(Math.random() * 5)], kid: 'risc-1', typ: 'secevent+jwt' })}.${seg({ iss: risc.issuer, aud: AUD, iat: now(), jti: jti(), events: { [`${RISC}/account-disabled`]: 1 } })}.${b64(32)}`],
        () => [`${seg([1, 2])}.${seg('x')}.`],
        () => [JSON.stringify({ events: {}, sub_id: { format: 'iss_sub' } }), 'application/json'],
        () => ['', ['text/plain', 'application/jwt', 'application/secevent+jwt; charset=utf-8', 'multipart/form-data; boundary=x'][Math.floor(Math.random() * 4)]],
      ];
      const statuses = new Map<number, number>();
      for (let i = 0; i < 2000; i += 40) {
        const batch = await Promise.all(Array.from({ length: 40 }, (_v, j) => {
          const [body, type] = makers[(i + j) % makers.length]!();
          return push(body, type).catch(() => ({ status: 0, body: undefined }));
        }));
        for (const { status } of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      expect([...statuses.keys()].sort()).to.deep.equal([400]);
      expect(statuses.get(400)).to.equal(2000);
    });
  });

  describe('Global Token Revocation (draft-parecki-oauth-global-token-revocation)', () => {
    async function revoke(body: unknown, token?: string) {
      const res = await fetch(`${h().issuer}/global-token-revocation`, {
        method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : undefined, challenge: res.headers.get('www-authenticate') };
    }
    const tokenOf = async (client: ClientMetadata, scope: string) => (await oidc.clientCredentialsGrant(await discover(h(), client), { scope })).access_token;

    it('204: every way in of the person ends (a sub_id by address); 404 for a subject of no account; 400 for a format it does not take', async () => {
      world().upstream.people.set('kai', { email: 'kai@up.example', email_verified: true });
      const { tokens } = await signInThroughUpstream(new Agent(), 'kai');
      const token = await tokenOf(gtrTool, GTR_SCOPE);
      expect(await revoke({ sub_id: { format: 'email', email: 'kai@up.example' } }, token)).to.deep.equal({ status: 204, body: undefined, challenge: null });
      expect(await refresh(world().config, tokens.refresh_token!)).to.equal('invalid_grant');
      expect(await plugin().sessions.list(await accountOf('kai@up.example'))).to.deep.equal([]);
      const subject = t('en', 'notice.upstream_account_disabled.subject', { serviceName: SERVICE });
      expect(await letters('kai@up.example', subject, 1)).to.have.length(1);

      expect(await revoke({ sub_id: { format: 'email', email: 'nobody@up.example' } }, token)).to.deep.include({ status: 404, body: { error: 'user_not_found', error_description: 'no account for this subject' } });
      expect((await revoke({ sub_id: { format: 'phone_number', phone_number: '+12065550100' } }, token)).status).to.equal(400);
      expect((await revoke({}, token)).body).to.include({ error: 'invalid_request' });
    });

    it('an iss_sub of the upstream holds sign-in through it too', async () => {
      world().upstream.people.set('max', { email: 'max@up.example', email_verified: true });
      await signInThroughUpstream(new Agent(), 'max');
      const token = await tokenOf(gtrTool, GTR_SCOPE);
      expect((await revoke({ sub_id: { format: 'iss_sub', iss: risc.issuer, sub: 'max' } }, token)).status).to.equal(204);
      expect(await plugin().upstreamSignals.held(UPSTREAM.id, 'max')).to.include({ event: 'global-token-revocation' });
      // Max still signs in by emailed code, and sees why the upstream's way is paused.
      const card = await linkedAccountsCard('max@up.example');
      expect(card).to.include('id="upstream-0-held"').and.include(t('en', 'console.upstreams.held_since'));
    });

    it('401 without a valid token; 403 for a token without the scope or of a client not allowed', async () => {
      const body = { sub_id: { format: 'email', email: 'hana@up.example' } };
      expect(await revoke(body)).to.deep.include({ status: 401, body: { error: 'invalid_token', error_description: 'a Bearer access token is required' } });
      expect((await revoke(body, 'not-a-token')).status).to.equal(401);
      const without = await revoke(body, await tokenOf(gtrWithout, 'ssf.read'));
      expect(without).to.deep.include({ status: 403, body: { error: 'insufficient_scope', error_description: `the access token needs the scope ${GTR_SCOPE}` } });
      expect(without.challenge).to.include('error="insufficient_scope"');
      expect(await revoke(body, await tokenOf(gtrOther, GTR_SCOPE))).to.deep.include({ status: 403, body: { error: 'access_denied', error_description: 'this client may not ask for global token revocation' } });
    });
  });
  // Last: after every SET and revocation above.
  describe('afterwards', () => {
    it('keeps every short-lived key of the receiver with a TTL: the jtis, the operator\'s record; only holds and marks persist', async () => {
      const store = plugin().store;
      const keys: string[] = [];
      // The test's prefix has "upstream-signals" in it: the key's own name is after it.
      for await (const key of store.scan()) if (/^upstream-(jti|signals|poll)/.test(key.slice(store.prefix.length))) keys.push(key);
      expect(keys.filter((k) => k.includes('upstream-jti:')).length).to.be.at.least(7);
      expect(keys.some((k) => k.endsWith(':actions'))).to.equal(true);
      const persistent = (await keysWithoutTtl(store)).filter((k) => keys.includes(k));
      expect(persistent.map((k) => k.slice(store.prefix.length)).sort()).to.deep.equal([`upstream-signals:{${UPSTREAM.id}}:held`, `upstream-signals:{${UPSTREAM.id}}:marked`]);
    });
  });
});
