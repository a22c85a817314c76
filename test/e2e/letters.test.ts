import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import type { ParsedMail } from 'mailparser';

import { Agent } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, lettersSettled, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';
import { sleep, until } from '../helpers/poll.ts';

const site = siteClient('l-site', { client_name: 'Shop', client_uri: 'https://shop.example' });

async function post(h: Harness, sub: string, title: string): Promise<{ status: number; json: unknown }> {
  const res = await documentedFetch(`${h.issuer}/api/notify`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ sub, category: 'transactional', title, body: 'Body.' }),
  });
  return { status: res.status, json: await res.json() };
}

async function connect(h: Harness, email: string): Promise<string> {
  const { tokens } = await signIn(h, await discover(h, site), new Agent(), email);
  return tokens.claims()!.sub;
}

const idOf = (letter: ParsedMail) => String(letter.headers.get('x-notification-id'));

/** Letters to `email` at a sink, by notification id. */
function byId(sink: SmtpSink, email: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of sink.letters) {
    if (JSON.stringify(l.to).includes(email) && l.headers.get('x-notification-id')) out.set(idOf(l), (out.get(idOf(l)) ?? 0) + 1);
  }
  return out;
}

describe('letter delivery: durable queue, retries, outages', () => {
  describe('in the service’s own worker', () => {
    let h: Harness;
    const refuse = new Map<string, number>();

    before(async () => {
      h = await startHarness('letters', { clients: [site], smtp: { refuse }, plugin: { letters: { backoffMs: 100, attempts: 6 } } });
    });
    after(() => h.close());

    it('loses no letter while the mail server is down, and sends each once when it is back', async () => {
      const sub = await connect(h, 'outage@example.com');
      await h.smtp.close();
      const answers = await Promise.all([1, 2, 3, 4].map((i) => post(h, sub, `Outage ${i}`)));
      expect(answers).to.deep.equal(Array(4).fill({ status: 202, json: { inApp: true, email: true, skipped: null } }));
      await sleep(400);
      const back = await startSmtpSink({ port: h.smtp.port });
      try {
        await until('four letters', () => byId(back, 'outage@example.com').size === 4);
        await sleep(500);
        expect([...byId(back, 'outage@example.com').values()]).to.deep.equal([1, 1, 1, 1]);
        expect(back.letters.map((l) => l.subject).sort()).to.deep.equal(['Outage 1', 'Outage 2', 'Outage 3', 'Outage 4']);
      } finally {
        await back.close();
      }
    });
  });

  describe('mail server answers', () => {
    let h: Harness;
    const refuse = new Map<string, number>();

    before(async () => {
      h = await startHarness('letters-codes', { clients: [site], smtp: { refuse }, plugin: { letters: { backoffMs: 100, attempts: 6 } } });
    });
    after(() => h.close());

    it('gives up at once on a 5xx and retries a 4xx until the letter goes', async () => {
      const hard = await connect(h, 'hard@example.com');
      const soft = await connect(h, 'soft@example.com');
      refuse.set('hard@example.com', 550);
      refuse.set('soft@example.com', 451);
      const from = h.smtp.attempts.length;
      const tries = (address: string) => h.smtp.attempts.slice(from).filter((a) => a === address).length;
      expect((await post(h, hard, 'Hard')).status).to.equal(202);
      expect((await post(h, soft, 'Soft')).status).to.equal(202);
      await until('two tries of the 4xx letter', () => tries('soft@example.com') >= 2);
      refuse.delete('soft@example.com');
      await h.smtp.waitFor((l) => l.subject === 'Soft', 10_000);
      await sleep(800);
      expect(tries('hard@example.com')).to.equal(1);
      expect(h.smtp.letters.filter((l) => l.subject === 'Soft')).to.have.length(1);
      expect(h.smtp.letters.filter((l) => l.subject === 'Hard')).to.have.length(0);
    });
  });

  describe('right before sending', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('letters-recheck', { clients: [site], plugin: { letters: { worker: false } } });
    });
    after(() => h.close());

    it('the worker asks again: a site muted, a category turned off or unsubscribed, or a blocked site gets no letter', async () => {
      const people = ['muted', 'off', 'unsub', 'blocked', 'kept'].map((p) => `${p}-re@example.com`);
      const subs = await Promise.all(people.map((email) => connect(h, email)));
      for (const [i, sub] of subs.entries()) {
        expect(await post(h, sub, `Re ${i}`)).to.deep.equal({ status: 202, json: { inApp: true, email: true, skipped: null } });
      }
      const id = async (email: string) => (await h.reference.accounts.findByEmail(email))!.accountId;
      const { senders } = h.reference.plugin;
      await senders.update(await id(people[0]!), 'l-site', { muted: true });
      await senders.update(await id(people[1]!), 'l-site', { categories: { transactional: 'off' } });
      await senders.update(await id(people[2]!), 'l-site', { categories: { transactional: 'email_off' } });
      await h.reference.plugin.blockSite(await id(people[3]!), 'l-site');

      h.reference.plugin.startLetterWorker();
      await h.smtp.waitFor((l) => l.subject === 'Re 4');
      expect(await lettersSettled(h)).to.equal(0);
      expect(h.smtp.letters.filter((l) => l.headers.has('x-notification-id')).map((l) => l.subject)).to.deep.equal(['Re 4']);
    });
  });

  describe('a worker process killed mid-batch (SIGKILL) and restarted', () => {
    let h: Harness;
    const children: ChildProcess[] = [];
    const script = fileURLToPath(new URL('../helpers/letter-worker.ts', import.meta.url));

    before(async () => {
      // The service queues letters; only the separate worker process sends them.
      h = await startHarness('letters-kill', { clients: [site], smtp: { delayMs: 150 }, plugin: { letters: { worker: false } } });
    });
    after(async () => {
      for (const child of children) child.kill('SIGKILL');
      await h.close();
    });

    function startWorker(): Promise<ChildProcess> {
      const child = spawn(process.execPath, [script], {
        env: {
          ...process.env, KEY_PREFIX: h.prefix, SMTP_URL: h.smtp.url, ISSUER: h.issuer,
          CLIENTS: JSON.stringify([site]), STALLED_MS: '1000',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      return new Promise((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('worker ready')) resolve(child); });
        child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
      });
    }

    it('delivers every queued letter exactly once', async () => {
      const sub = await connect(h, 'batch@example.com');
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(h, sub, `Batch ${i + 1}`)));
      expect(answers.every((a) => a.status === 202)).to.equal(true);
      expect(await h.reference.plugin.letters.pending()).to.equal(8);

      const first = await startWorker();
      await until('two letters', () => byId(h.smtp, 'batch@example.com').size >= 2);
      // Half-way through the third letter's transfer (the sink takes 150 ms to say 250).
      await sleep(60);
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      const before = byId(h.smtp, 'batch@example.com').size;
      expect(before).to.be.within(2, 7);

      await startWorker();
      await until('all eight letters', () => byId(h.smtp, 'batch@example.com').size === 8, 30_000);
      await sleep(1500);
      const counts = byId(h.smtp, 'batch@example.com');
      expect([...counts.values()]).to.deep.equal(Array(8).fill(1));
      expect(await h.reference.plugin.letters.pending()).to.equal(0);
    });
  });
});
