import { createServer, request, type Server } from 'node:http';

import { expect } from 'chai';
import * as oidc from 'openid-client';

import { Agent, formFor, forms } from '../helpers/agent.ts';
import { asHarness, sharedJwks, startInstance, type Instance } from '../helpers/instance.ts';
import { freePort } from '../helpers/net.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, oauthError, RP, signIn, siteClient } from '../helpers/reference.ts';
import { dropPrefix, REDIS_CLUSTER, REDIS_URL, testRedis, uniquePrefix } from '../helpers/redis.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp.ts';

const site = siteClient('multi-site', { client_uri: 'https://shop.example', backchannel_logout_session_required: true, backchannel_logout_uri: 'https://shop.example/bcl' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Served { method: string; path: string; instance: number }

/** A load balancer as small as it gets: each request to the next instance in turn. */
async function roundRobin(port: number, ports: number[]): Promise<{ server: Server; url: string; served: Served[] }> {
  const served: Served[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const instance = next++ % ports.length;
    served.push({ method: req.method!, path: req.url!.split('?')[0]!, instance });
    const upstream = request({ host: '127.0.0.1', port: ports[instance], method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${port}`, served };
}

describe(`two reference-provider processes behind a round-robin proxy, on ${REDIS_CLUSTER ? 'the Redis Cluster' : 'one Redis'}`, () => {
  let smtp: SmtpSink;
  let instances: Instance[] = [];
  let proxy: Awaited<ReturnType<typeof roundRobin>>;
  const prefix = uniquePrefix('instances');
  const redis = testRedis();

  before(async function () {
    this.timeout(60_000);
    smtp = await startSmtpSink();
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const env = {
      REDIS_URL: REDIS_CLUSTER ? `redis+cluster://${REDIS_CLUSTER}` : REDIS_URL,
      KEY_PREFIX: prefix,
      SMTP_URL: smtp.url,
      JWKS: await sharedJwks(),
      COOKIE_KEYS: 'shared-cookie-key-0123456789,older-key-0123456789',
    };
    instances = await Promise.all([0, 1].map(() => startInstance({ clients: [site], issuer, env })));
    // The proxy listens where the issuer says.
    proxy = await roundRobin(port, instances.map((i) => i.port));
  });
  after(async () => {
    proxy?.server.close();
    await Promise.all(instances.map((i) => i.stop()));
    await dropPrefix(redis, prefix);
    await redis.quit();
    await smtp.close();
  });

  /** Which instances served the requests to paths matching `re` since `from`. */
  const servedBy = (re: RegExp, from = 0) => new Set(proxy.served.slice(from).filter((s) => re.test(s.path)).map((s) => s.instance));

  it('sign-in with its code letter and consent, refresh with rotation and theft detection, introspection: every step may land on either instance', async function () {
    this.timeout(30_000);
    const h = asHarness(proxy.url, smtp);
    const config = await discover(h, site);
    const from = proxy.served.length;
    const { tokens } = await signIn(h, config, new Agent(), 'multi1@example.com');
    expect(servedBy(/^\/(auth|interaction)/, from)).to.deep.equal(new Set([0, 1]));
    let current = tokens;
    for (let i = 0; i < 4; i += 1) current = await oidc.refreshTokenGrant(config, current.refresh_token!);
    expect(servedBy(/^\/token$/, from)).to.deep.equal(new Set([0, 1]));
    expect((await oidc.tokenIntrospection(config, current.access_token)).active).to.equal(true);
    expect((await oidc.tokenIntrospection(config, current.access_token)).active).to.equal(true);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
    expect((await oidc.tokenIntrospection(config, current.access_token)).active).to.equal(false);
  });

  it('the console: a page and its CSRF token made by one instance are accepted by the other', async function () {
    this.timeout(30_000);
    const h = asHarness(proxy.url, smtp);
    const agent = new Agent();
    await signIn(h, await discover(h, site), agent, 'multi2@example.com');
    // The console signs the person in as its own client, then shows the page.
    const page = await agent.follow(await agent.get(`${proxy.url}/console`));
    expect(page.status).to.equal(200);
    const shownBy = proxy.served.at(-1)!.instance;
    const form = formFor(page.body, '/console/language');
    const done = await agent.request('POST', `${proxy.url}${form.action}`, { ...form.fields, locale: 'de' }, { origin: proxy.url });
    const postedTo = proxy.served.at(-1)!.instance;
    expect(postedTo).to.not.equal(shownBy);
    expect(done.status).to.equal(303);
    expect(done.location).to.equal(`${proxy.url}/console?done=language#notice`);
    const after = await agent.get(done.location!);
    expect(after.body).to.include('lang="de"');
  });

  it('/api/notify through both instances: every letter goes once (one worker per instance)', async function () {
    this.timeout(30_000);
    const h = asHarness(proxy.url, smtp);
    const { tokens } = await signIn(h, await discover(h, site), new Agent(), 'multi3@example.com');
    const from = proxy.served.length;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => documentedFetch(`${proxy.url}/api/notify`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sub: tokens.claims()!.sub, category: 'transactional', title: `Letter ${i}`, body: 'Body.' }),
    }).then(async (r) => ({ status: r.status, json: await r.json() as Record<string, unknown> }))));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(10).fill(202));
    expect(servedBy(/^\/api\/notify$/, from)).to.deep.equal(new Set([0, 1]));
    const ids = () => smtp.letters.filter((l) => JSON.stringify(l.to).includes('multi3@example.com') && l.headers.has('x-notification-id')).map((l) => String(l.headers.get('x-notification-id')));
    for (let i = 0; i < 200 && ids().length < 10; i += 1) await sleep(50);
    await sleep(1000);
    expect(ids()).to.have.length(10);
    expect(new Set(ids()).size).to.equal(10);
  });

  it('/session/end with a hint: the page from one instance, the sign-out on the other; the session and its refresh token are gone', async function () {
    this.timeout(30_000);
    const h = asHarness(proxy.url, smtp);
    const config = await discover(h, site);
    const agent = new Agent();
    const { tokens } = await signIn(h, config, agent, 'multi4@example.com');
    const page = await agent.get(`${proxy.url}/session/end?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: site.post_logout_redirect_uris![0]!, state: 'st-m' })}`);
    expect(page.status).to.equal(200);
    const shownBy = proxy.served.at(-1)!.instance;
    const res = await agent.submit(page, forms(page.body)[0]!);
    expect(proxy.served.at(-1)!.instance).to.not.equal(shownBy);
    expect(res.status).to.equal(303);
    expect(res.location).to.equal(`${RP}/multi-site/signed-out?state=st-m`);
    expect(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).to.equal('invalid_grant');
  });
});
