/**
 * The data copy (GET /console/api/export) reads every part of the person's
 * data: at most 10 an hour per person, then 429 rate_limited with
 * Retry-After, so a stolen session cookie is no lever on the service.
 * Another person's copies are counted apart.
 */
import { expect } from 'chai';

import { Agent } from '../helpers/agent.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';

describe('the console\'s data copy is rate-limited per person', () => {
  let h: Harness;
  const site = siteClient('export-rate');
  setUp(async () => (h = await startHarness('export-rate', { clients: [site] })));

  const copy = (agent: Agent) => agent.request('GET', `${h.issuer}/console/api/export`, undefined, { accept: 'application/json' });

  it('10 copies an hour, then 429 with Retry-After; another person still gets theirs', async () => {
    const config = await discover(h, site);
    const [one, two] = [new Agent(), new Agent()];
    await signIn(h, config, one, 'export-one@example.com');
    await signIn(h, config, two, 'export-two@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) statuses.push((await copy(one)).status);
    expect(statuses).to.deep.equal(Array(10).fill(200));
    const refused = await copy(one);
    expect([refused.status, JSON.parse(refused.body)]).to.deep.equal([429, { error: 'rate_limited', error_description: 'at most 10 copies of your data an hour' }]);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(3500, 3600);
    expect((await copy(two)).status).to.equal(200);
  });
});
