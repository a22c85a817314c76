/**
 * Session expiry on a Redis Cluster: the person's expiring sessions live in
 * the person's slot and the index of people in a slot of its own (two
 * writes at sign-in, person first); the sweep claims across both. A session
 * that ends by its lifetime gets its site one session-revoked SET and one
 * logout token; one signed out first is not told again. Runs in the Cluster pass.
 */
import { expect } from 'chai';

import { Agent, forms } from '../helpers/agent.ts';
import { clusterClient, REDIS_CLUSTER } from '../helpers/redis.ts';
import { signIn } from '../helpers/reference.ts';
import { CAEP, pastLifetime, received, settled, startExpiryService, type ExpiryService } from '../helpers/session-expiry.ts';
import { verifySet } from '../helpers/ssf-receiver.ts';

describe('session expiry on a Redis Cluster (the Cluster pass)', () => {
  let s: ExpiryService;

  before(async () => {
    s = await startExpiryService('expiry-cluster', { embedded: false, sweepEveryMs: 200, client: clusterClient(REDIS_CLUSTER!) });
  });
  after(() => s.close());

  it('a session that ends by its lifetime: one session-revoked SET and one logout token; one signed out first: nothing more', async () => {
    const lapsed = await signIn(s.h, s.config, new Agent(), 'lapse@example.com');
    const started = Date.now();
    const leaver = new Agent();
    const left = await signIn(s.h, s.config, leaver, 'leaver@example.com');
    const page = await leaver.get(`${s.h.issuer}/session/end`);
    await leaver.follow(await leaver.submit(page, forms(page.body)[0]!, { logout: 'yes' }));

    await pastLifetime(started);
    await received(s, 2, 2);
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
    await settled(s.h);

    const sets = await Promise.all(s.ssf.pushed.map((p) => verifySet(p.set, s.metadata, 'exp-site')));
    expect(sets.map((set) => [set.type, (set.payload.sub_id as { sub: string }).sub, set.event.reason_user]).toSorted()).to.deep.equal([
      [`${CAEP}/session-revoked`, lapsed.tokens.claims()!.sub, { en: 'Your session expired.' }],
      [`${CAEP}/session-revoked`, left.tokens.claims()!.sub, { en: 'You signed out.' }],
    ].toSorted());
    const tokens = await Promise.all(s.bcl.tokens.map((t) => s.bcl.verify(t, s.h.issuer, 'exp-site')));
    expect(tokens.map((t) => t.sid).toSorted()).to.deep.equal([lapsed.tokens.claims()!.sid, left.tokens.claims()!.sid].toSorted());
  });
});
