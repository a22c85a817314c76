import { expect } from 'chai';
import type { Redis } from 'ioredis';

import { Agent } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { sleep, until } from '../helpers/poll.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const site = siteClient('ret-site', { client_uri: 'https://shop.example' });

describe('letter queue retention: no finished job outlives its age', () => {
  let h: Harness;
  const refuse = new Map([['refused@example.com', 550]]);

  before(async () => {
    h = await startHarness('retention', {
      clients: [site],
      smtp: { refuse },
      plugin: {
        letters: { keepCompletedSeconds: 1, keepFailedSeconds: 2 },
        // This person's letters go to an address the mail server refuses for good (550).
        contacts: async (accountId: string) => {
          const account = await h.reference.accounts.get(accountId);
          return account && { email: account.email === 'gives-up@example.com' ? 'refused@example.com' : account.email };
        },
      },
    });
  });
  after(() => h.close());

  async function notify(sub: string, title: string): Promise<string> {
    const res = await documentedFetch(`${h.issuer}/api/notify`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`, 'content-type': 'application/json', 'idempotency-key': title.replace(' ', '-') },
      body: JSON.stringify({ sub, category: 'transactional', title, body: 'Body.' }),
    });
    expect(res.status).to.equal(202);
    return title;
  }

  /** BullMQ's keys of the letter queue that name a job. */
  async function jobKeys(): Promise<string[]> {
    const redis = h.redis as Redis;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${h.prefix}{letters}:letters:*`, 'COUNT', 10_000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    const sets = await Promise.all(['completed', 'failed'].map((s) => redis.zrange(`${h.prefix}{letters}:letters:${s}`, '0', '-1')));
    return [...keys.filter((k) => !/:(meta|id|events|stalled-check|marker)$/.test(k) && !/:(completed|failed|wait|active|delayed|paused|prioritized)$/.test(k)), ...sets.flat()];
  }

  it('removes the last sent and the last given-up letter’s jobs once past their ages, though no later job finishes', async function () {
    this.timeout(20_000);
    const config = await discover(h, site);
    const sent = (await signIn(h, config, new Agent(), 'kept@example.com')).tokens.claims()!.sub;
    const failed = (await signIn(h, config, new Agent(), 'gives-up@example.com')).tokens.claims()!.sub;
    await notify(sent, 'Sent one');
    await notify(failed, 'Refused one');
    await h.smtp.waitFor((l) => l.subject === 'Sent one');
    await until('the refused letter tried', () => h.smtp.attempts.includes('refused@example.com'), 5000);
    await sleep(100);
    expect((await jobKeys()).length, 'jobs kept right after finishing').to.be.above(1);
    // Gone by 1.5 s past the longer age (2 s, the failed one's): polled until then.
    await until('no finished job kept', async () => (await jobKeys()).length === 0, 3500);
  });
});
