/**
 * A Shared Signals push goes through the outbound guard (KNOWN-TRAPS 29): a
 * site holding a client-credentials token aims its stream at loopback by
 * every spelling, by a name that resolves there, with a user in the URL; the
 * creation is refused where the URL alone says so, and the push where the
 * name resolves, before a socket connects. A listener on 127.0.0.1 that
 * records every connection proves nothing arrived there, not even a TLS
 * hello, let alone the stream's Authorization header.
 */
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';

import { expect } from 'chai';
import type { ClientMetadata } from 'oidc-provider';
import type { Redis } from 'ioredis';
import * as oidc from 'openid-client';

import { SHARED_SIGNALS_EVENT, type SharedSignalsEvent } from '../../src/events.ts';
import { Agent } from '../helpers/agent.ts';
import { until } from '../helpers/poll.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { setUp } from '../helpers/set-up.ts';
import { receiverToken, ssfCall } from '../helpers/ssf-receiver.ts';

const PUSH = 'urn:ietf:rfc:8935';
const receiverSite = (id: string) => siteClient(id, { grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], scope: 'openid ssf.manage ssf.read' });

/** A TCP listener that answers nothing and records each connection and the bytes it got. */
async function trap(): Promise<{ port: number; connections: number; bytes: number; close(): Promise<void> }> {
  const seen = { connections: 0, bytes: 0 };
  const server: Server = createServer((socket) => {
    seen.connections += 1;
    socket.on('data', (chunk) => { seen.bytes += chunk.length; });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(seen, {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => { server.close(() => r()); server.unref(); }),
  });
}

/** A name other than localhost that /etc/hosts maps to 127.0.0.1 on this machine (the test's premise, checked). */
async function loopbackName(): Promise<string> {
  const names = readFileSync('/etc/hosts', 'utf8').split('\n')
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .filter(([address]) => address?.startsWith('127.'))
    .flatMap(([, ...hosts]) => hosts)
    .filter((host) => host && !/(^|\.)localhost\.?$/i.test(host));
  expect(names, 'premise: /etc/hosts maps a name other than localhost to 127.0.0.1').to.not.be.empty;
  const name = names[0]!;
  const addresses = await lookup(name, { all: true });
  expect(addresses.map((a) => a.address), `premise: ${name} resolves to 127.0.0.1 only`).to.deep.equal(['127.0.0.1']);
  return name;
}

describe('Shared Signals push: the outbound guard', () => {
  let h: Harness;
  let site: oidc.Configuration;
  let named: oidc.Configuration;
  let kept: oidc.Configuration;
  let listener: Awaited<ReturnType<typeof trap>>;
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  const events: SharedSignalsEvent[] = [];

  setUp(async () => {
    listener = await trap();
    h = await startHarness('ssf-outbound', {
      // 127.0.0.1 is not listed: every spelling of it is refused (a listed host is allowed by all of its spellings).
      clients: [receiverSite('ssf-aim'), receiverSite('ssf-named'), receiverSite('ssf-kept')], allowPrivateFetchHosts: ['allowed.test'],
      logger: { info() {}, warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }), error() {} },
    });
    h.reference.plugin.on(SHARED_SIGNALS_EVENT, (event) => events.push(event));
    [site, named, kept] = await Promise.all([discover(h, receiverSite('ssf-aim')), discover(h, receiverSite('ssf-named')), discover(h, receiverSite('ssf-kept'))]);
    return { async close() { await h.close(); await listener.close(); } };
  });

  const call = (method: string, path: string, bearer: string, body?: unknown) => ssfCall(h.issuer, method, path, bearer, body);
  const create = async (endpoint: string, extra: Record<string, unknown> = {}, as = site) =>
    call('POST', '/ssf/stream', await receiverToken(as, 'ssf.manage'), { delivery: { method: PUSH, endpoint_url: endpoint, ...extra } });
  const refused = (description: string) => ({ status: 400, body: { error: 'invalid_request', error_description: `delivery.endpoint_url: ${description}` } });
  const privateAddress = refused('a private address (allowed only for the hosts in allowPrivateFetchHosts)');

  it('refuses a stream to loopback or a private address by any spelling, and one with a user in its URL: 400, nothing connects', async () => {
    const port = listener.port;
    for (const host of [
      'localhost', 'LOCALHOST', 'localhost.', 'receiver.localhost', '127.1', '0x7f000001', '2130706433', '0177.0.0.1', '0.0.0.0', '0',
      '[::1]', '[::]', '[::ffff:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]', '[::127.0.0.1]', '[64:ff9b::127.0.0.1]',
      '10.0.0.1', '169.254.169.254', '172.16.0.1', '192.168.1.1', '100.64.0.1', '[fd00::1]', '[fe80::1]',
    ]) {
      const res = await create(`https://${host}:${port}/ssf`, { authorization_header: 'Bearer secret-of-the-stream' });
      expect({ status: res.status, body: res.body }, host).to.deep.equal(privateAddress);
    }
    expect({ ...(await create('https://user:password@receiver.example/ssf')) }).to.deep.include(refused('must not hold a user name or password'));
    // An allowed host with a user in its URL is refused too.
    expect({ ...(await create('http://user@allowed.test/ssf')) }).to.deep.include(refused('must not hold a user name or password'));
    expect([listener.connections, listener.bytes]).to.deep.equal([0, 0]);
  });

  it('a name that resolves to 127.0.0.1: the stream is kept, but neither verification nor an event is pushed there; no byte arrives', async () => {
    const name = await loopbackName();
    const manage = await receiverToken(named, 'ssf.manage');
    const created = await create(`https://${name}:${listener.port}/ssf`, { authorization_header: 'Bearer secret-of-the-stream' }, named);
    expect(created.status).to.equal(201);
    const streamId = created.body!.stream_id as string;
    const from = warnings.length;
    expect((await call('POST', '/ssf/verify', manage, { stream_id: streamId, state: 'aimed' })).status).to.equal(204);
    const refusedPush = () => warnings.slice(from).filter((w) => w.message === 'security event not pushed: the endpoint is not allowed');
    // Until the push was refused, or arrived: no fixed wait.
    for (const deadline = Date.now() + 10_000; refusedPush().length === 0 && listener.connections === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect([listener.connections, listener.bytes]).to.deep.equal([0, 0]);
    expect(refusedPush().map((w) => w.fields)).to.deep.equal([
      { clientId: 'ssf-named', reason: 'the endpoint resolves to a loopback, private or special-use address' },
    ]);
    // Not retried: the queue empties once the refused try has ended (the warning is written inside the try,
    // so the job can still be there a moment after it), and no second refusal follows.
    await until('the refused job leaves the queue', async () => (await h.reference.plugin.sharedSignals.pending()) === 0);
    expect(refusedPush()).to.have.length(1);
    // The host hears of it once, as refused (the endpoint's, not the receiver's): not a failure to retry.
    expect(events.filter((e) => e.clientId === 'ssf-named')).to.deep.equal([
      { clientId: 'ssf-named', outcome: 'refused', attempt: 1, reason: 'the endpoint resolves to a loopback, private or special-use address' },
    ]);

    // An event about a person who signed in to the site: refused the same way.
    await signIn(h, named, new Agent(), 'aimed@example.com', { scope: 'openid' });
    const account = (await h.reference.accounts.findByEmail('aimed@example.com'))!.accountId;
    await h.reference.plugin.sharedSignals.accountDisabled(account);
    for (const deadline = Date.now() + 10_000; refusedPush().length < 2 && listener.connections === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect([listener.connections, listener.bytes]).to.deep.equal([0, 0]);
    expect(refusedPush()).to.have.length(2);
    // A PATCH to a refused spelling is refused as a create is.
    expect({ ...(await call('PATCH', '/ssf/stream', manage, { stream_id: streamId, delivery: { method: PUSH, endpoint_url: `https://localhost.:${listener.port}/` } })) })
      .to.deep.include(privateAddress);
  });

  it('a stream kept from before that points at localhost, 127.1, 0x7f000001, [::ffff:127.0.0.1] or holds a user: every push refused before connecting', async () => {
    const created = await create('https://receiver.example/ssf', {}, kept);
    expect(created.status).to.equal(201);
    await signIn(h, kept, new Agent(), 'kept@example.com', { scope: 'openid' });
    const account = (await h.reference.accounts.findByEmail('kept@example.com'))!.accountId;
    const refusedPush = () => warnings.filter((w) => w.message === 'security event not pushed: the endpoint is not allowed' && w.fields?.clientId === 'ssf-kept');
    const kinds = { private: 'endpoint_url: a private address (allowed only for the hosts in allowPrivateFetchHosts)', user: 'endpoint_url: must not hold a user name or password' };
    for (const [host, reason] of [
      ['localhost', kinds.private], ['[::ffff:127.0.0.1]', kinds.private], ['127.0.0.1', kinds.private], ['127.1', kinds.private], ['0x7f000001', kinds.private],
      ['user:password@receiver.example', kinds.user], ['user@127.0.0.1', kinds.user],
    ] as const) {
      // As a stream created before these spellings were refused holds it (the store, not the API: the API refuses it now).
      const delivery = { method: PUSH, endpoint_url: `https://${host}:${listener.port}/ssf`, authorization_header: 'Bearer secret-of-the-stream' };
      await (h.redis as Redis).hset(`${h.prefix}ssf:{ssf-kept}:stream`, 'delivery', JSON.stringify(delivery));
      const before = refusedPush().length;
      await h.reference.plugin.sharedSignals.accountDisabled(account);
      for (const deadline = Date.now() + 10_000; refusedPush().length === before && listener.connections === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
      expect([listener.connections, listener.bytes], host).to.deep.equal([0, 0]);
      expect(refusedPush().slice(before).map((w) => w.fields!.reason), host).to.deep.equal([reason]);
    }
  });
});

describe('Shared Signals push to an allowed host: no redirect followed, a long answer not read to its end', () => {
  let h: Harness;
  let listener: Awaited<ReturnType<typeof trap>>;
  let receiver: HttpServer;
  let receiverPort: number;
  const answers: { path: string; finished?: boolean }[] = [];
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  const sites = [receiverSite('ssf-redirects'), receiverSite('ssf-talks'), receiverSite('ssf-short')];

  setUp(async () => {
    listener = await trap();
    // /redirect answers 307 to the trap; /short 400 invalid_key; /long answers 400 with 64 MiB.
    receiver = createHttpServer((req, res) => {
      req.resume();
      const answer: { path: string; finished?: boolean } = { path: req.url! };
      answers.push(answer);
      if (req.url === '/redirect') {
        res.writeHead(307, { location: `http://127.0.0.1:${listener.port}/ssf` }).end();
        return;
      }
      if (req.url === '/short') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"err":"invalid_key","description":"not our key"}');
        return;
      }
      res.on('close', () => { answer.finished = res.writableFinished; });
      res.writeHead(400, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      res.write('{"err":"invalid_request","description":"');
      let left = 64;
      const more = () => {
        while (left > 0 && !res.destroyed) {
          left -= 1;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        if (!res.destroyed) res.end('"}');
      };
      more();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverPort = (receiver.address() as AddressInfo).port;
    h = await startHarness('ssf-outbound-allowed', {
      clients: sites, allowPrivateFetchHosts: ['127.0.0.1'],
      logger: { info() {}, warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }), error() {} },
    });
    return { async close() { await h.close(); await listener.close(); receiver.closeAllConnections(); receiver.close(); } };
  });

  const logged = (message: string, clientId: string) => warnings.filter((w) => w.message === message && w.fields?.clientId === clientId);
  const verifyAt = async (client: ClientMetadata, path: string) => {
    const manage = await receiverToken(await discover(h, client), 'ssf.manage');
    const created = await ssfCall(h.issuer, 'POST', '/ssf/stream', manage, { delivery: { method: PUSH, endpoint_url: `http://127.0.0.1:${receiverPort}${path}` } });
    expect(created.status).to.equal(201);
    expect((await ssfCall(h.issuer, 'POST', '/ssf/verify', manage, { stream_id: created.body!.stream_id })).status).to.equal(204);
  };

  it('a 307 is a failed try (retried later), never followed', async () => {
    await verifyAt(sites[0]!, '/redirect');
    for (const deadline = Date.now() + 10_000; logged('security event will be retried', 'ssf-redirects').length === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect(logged('security event will be retried', 'ssf-redirects').map((w) => w.fields!.reason)).to.deep.equal(['receiver answered 307']);
    expect(answers.filter((a) => a.path === '/redirect')).to.have.length(1);
    expect([listener.connections, listener.bytes]).to.deep.equal([0, 0]);
  });

  it('a 400 with a 64 MiB body: refused by the receiver, not tried again, the answer cut off', async () => {
    await verifyAt(sites[1]!, '/long');
    const refused = () => logged('security event refused by the receiver', 'ssf-talks');
    for (const deadline = Date.now() + 10_000; (answers.find((a) => a.path === '/long')?.finished === undefined || refused().length === 0) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    expect(answers.find((a) => a.path === '/long')).to.deep.equal({ path: '/long', finished: false });
    expect(refused().map((w) => w.fields!.reason)).to.deep.equal(['refused: other']);
    expect(logged('security event will be retried', 'ssf-talks')).to.deep.equal([]);
  });

  it('a 400 naming a code of the registry: refused by the receiver, with that code', async () => {
    await verifyAt(sites[2]!, '/short');
    const refused = () => logged('security event refused by the receiver', 'ssf-short');
    await until('the receiver\'s refusal is logged', async () => refused().length > 0);
    expect(refused().map((w) => w.fields!.reason)).to.deep.equal(['refused: invalid_key']);
    expect(answers.filter((a) => a.path === '/short')).to.have.length(1);
  });
});
