/**
 * Records of the previous store that are not what oidc-provider wrote
 * (issue 33's review): the host's own data, but a copy damaged, edited by
 * hand or written by another version must not turn a site's request into a
 * 5xx. Each is planted in a host's copy of oidc-provider's example Redis
 * adapter under a token's value, then the token is introspected, refreshed
 * and revoked through HTTP, and the bulk import meets it.
 */
import { expect } from 'chai';

import { exampleRedisHost, tokenCall } from '../helpers/adopt-host.ts';
import { siteClient } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

const site = siteClient('adopt-odd');
const basic = `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`;
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/**
 * What is planted under a token's value: the text the example adapter stores
 * (a JSON string for an access token, a hash's `payload` for a refresh token),
 * and whether oidc-provider would take the access token as active.
 */
const ODD: Record<string, { text: (kind: string) => string; active: boolean }> = {
  'not JSON': { text: (kind) => `{"kind":"${kind}",`, active: false },
  'a number': { text: () => '42', active: false },
  'a string': { text: () => '"hello"', active: false },
  'an array': { text: () => '[1,2,3]', active: false },
  'another model\'s kind': { text: () => JSON.stringify({ kind: 'Session', uid: 'u', accountId: 'odd-person', exp: inAnHour() }), active: false },
  'an empty object': { text: () => '{}', active: false },
  'fields of the wrong types': { text: (kind) => JSON.stringify({ kind, grantId: { a: 1 }, accountId: 5, clientId: [site.client_id], exp: 'soon', iat: 'then', scope: 7 }), active: false },
  'a grant that is not there': { text: (kind) => JSON.stringify({ kind, clientId: site.client_id, accountId: 'odd-person', grantId: 'no-such-grant', exp: inAnHour(), iat: 1, scope: 'openid' }), active: false },
  // Records oidc-provider takes as they are (no grant: it finds none to check): moved, and active as they were.
  'an exp thousands of years ahead': { text: (kind) => JSON.stringify({ kind, clientId: site.client_id, accountId: 'odd-person', exp: 1e17, iat: 1, scope: 'openid' }), active: true },
  'a 2 MB claim': { text: (kind) => JSON.stringify({ kind, clientId: site.client_id, accountId: 'odd-person', exp: inAnHour(), iat: 1, scope: 'openid', extra: { blob: 'x'.repeat(2_000_000) } }), active: true },
};
/**
 * The ones the previous store holds but that are not records: never moved,
 * counted unreadable by the import. A refresh token's hash is spread into an
 * object by the example adapter (`{ ...rest, ...JSON.parse(payload) }`), so a
 * number, string or array there reads as an object (moved, and refused by
 * oidc-provider as any payload without its fields).
 */
const UNREADABLE = { AccessToken: ['not JSON', 'a number', 'a string', 'an array', 'another model\'s kind'], RefreshToken: ['not JSON', 'another model\'s kind'] };

describe('odd records in the previous store (a damaged or hand-edited copy): never a 5xx', function () {
  this.timeout(60_000);
  const world = setUp(async () => {
    const made = await exampleRedisHost('adopt-odd', [site]);
    const { before } = made;
    const tokens: Record<string, { at: string; rt: string }> = {};
    for (const [i, name] of Object.keys(ODD).entries()) {
      const value = (kind: string) => `odd-${kind}-${String(i).padStart(2, '0')}-0123456789abcdefghijklmnop`;
      tokens[name] = { at: value('at'), rt: value('rt') };
      await before.client.set(`AccessToken:${tokens[name].at}`, ODD[name]!.text('AccessToken'), 'EX', 3600);
      await before.client.hset(`RefreshToken:${tokens[name].rt}`, 'payload', ODD[name]!.text('RefreshToken'));
      await before.client.expire(`RefreshToken:${tokens[name].rt}`, 3600);
    }
    const records = async function* () {
      for (const { at, rt } of Object.values(tokens)) {
        yield { model: 'AccessToken', id: at };
        yield { model: 'RefreshToken', id: rt };
      }
    };
    await made.host.switchToPlugin({ previousAdapter: before.Adapter, adoption: { records } });
    return { ...made, tokens };
  });

  const post = async (path: string, form: Record<string, string>) => {
    const res = await fetch(`${world().host.issuer}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
    const text = await res.text();
    return { status: res.status, text };
  };

  for (const [name, { active }] of Object.entries(ODD)) {
    it(`${name}: introspection ${active ? 'active' : '{ active: false }'}, refresh invalid_grant, revocation 200`, async () => {
      const { at, rt } = world().tokens[name]!;
      const answer = await post('/token/introspection', { token: at });
      expect({ status: answer.status, active: (JSON.parse(answer.text) as { active: boolean }).active }).to.deep.equal({ status: 200, active });
      const ofRefresh = await post('/token/introspection', { token: rt, token_type_hint: 'refresh_token' });
      expect(ofRefresh.status).to.equal(200);
      const refreshed = await tokenCall(world().host.issuer, site, { grant_type: 'refresh_token', refresh_token: rt });
      expect({ status: refreshed.status, error: refreshed.json.error }).to.deep.equal({ status: 400, error: 'invalid_grant' });
      for (const token of [at, rt]) expect(await post('/token/revocation', { token })).to.deep.equal({ status: 200, text: '' });
    });
  }

  it('deleteAccount while the window is open walks past them (they name nobody it can see): the person is deleted, they stay', async () => {
    const { host, before, tokens } = world();
    expect(host.plugin!.adoption!.open).to.equal(true);
    expect(await host.plugin!.deleteAccount('odd-person')).to.have.keys('sites', 'keysErased', 'jobsDropped');
    for (const name of UNREADABLE.AccessToken) expect(await before.client.exists(`AccessToken:${tokens[name]!.at}`), name).to.equal(1);
  });

  it('the import meets them all and finishes: the ones that are not records counted unreadable and left in the previous store, none failed', async () => {
    const progress = await world().host.plugin!.adoption!.importRecords({ perSecond: 10_000 });
    expect({ seen: progress.seen, failed: progress.failed, unreadable: progress.unreadable, finished: progress.finishedAt !== undefined })
      .to.deep.equal({ seen: Object.keys(ODD).length * 2, failed: 0, unreadable: UNREADABLE.AccessToken.length + UNREADABLE.RefreshToken.length, finished: true });
    for (const name of UNREADABLE.AccessToken) expect(await world().before.client.exists(`AccessToken:${world().tokens[name]!.at}`), name).to.equal(1);
    for (const name of UNREADABLE.RefreshToken) expect(await world().before.client.exists(`RefreshToken:${world().tokens[name]!.rt}`), name).to.equal(1);
    expect(world().host.lines.filter((l) => l.message.includes('cannot be read')).map((l) => JSON.stringify(l.fields)).join('\n')).to.not.include('odd-');
  });
});
