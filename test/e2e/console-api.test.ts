import { expect } from 'chai';

import { Agent } from '../helpers/agent.ts';
import { documentedFetch } from '../helpers/openapi.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';

const shop = siteClient('c-shop', { client_name: 'Shop', client_uri: 'https://shop.example', logo_uri: 'https://shop.example/logo.png' });
const news = siteClient('c-news', { client_name: 'News', client_uri: 'https://news.example' });

type Json = Record<string, unknown>;

/** The console's JSON API: sites, senders, inbox (organizations are in org-removal.test.ts). */
describe('console JSON API', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness('console-api', { clients: [shop, news], plugin: { notify: { perPerson: { limit: 100, windowSeconds: 60 } } } });
  });
  after(() => h.close());

  async function api(agent: Agent, method: string, path: string, body?: unknown, headers: Record<string, string> = { origin: h.issuer }) {
    const url = new URL(`${h.issuer}/console/api${path}`);
    const res = await fetch(url, {
      method,
      headers: {
        cookie: [...(agent.cookies.get(url.host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; '),
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) as unknown : undefined, headers: res.headers };
  }

  async function notify(client: typeof shop, sub: string, extra: Json = {}) {
    const res = await documentedFetch(`${h.issuer}/api/notify`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sub, category: 'product', title: 'T', body: 'B', ...extra }),
    });
    return { status: res.status, json: await res.json() as Json };
  }

  /** A person signed in to both sites, with the subs the sites got. */
  async function person(email: string) {
    const agent = new Agent();
    const a = await signIn(h, await discover(h, shop), agent, email);
    const b = await signIn(h, await discover(h, news), agent, email);
    return { agent, shopSub: a.tokens.claims()!.sub, newsSub: b.tokens.claims()!.sub };
  }

  it('answers 401 login_required on every route without a service session', async () => {
    const stranger = new Agent();
    const routes: [string, string, unknown?][] = [
      ['GET', '/sites'], ['POST', '/sites/c-shop/block'], ['POST', '/sites/c-shop/unblock'],
      ['GET', '/senders'], ['PUT', '/senders/c-shop', { muted: true }],
      ['GET', '/inbox'], ['POST', '/inbox/x/read'], ['DELETE', '/inbox/x'],
      ['GET', '/orgs/o/members'], ['DELETE', '/orgs/o/members/a'],
    ];
    for (const [method, path, body] of routes) {
      const res = await api(stranger, method, path, body);
      expect({ route: `${method} ${path}`, status: res.status, body: res.body }).to.deep.equal({
        route: `${method} ${path}`, status: 401, body: { error: 'login_required', error_description: 'sign in to the service first' },
      });
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('content-security-policy')).to.equal("default-src 'none'; frame-ancestors 'none'");
    }
  });

  // Every route of the JSON API that changes something (docs/console.md "The person's console": no CSRF token, the origin check instead).
  const CHANGES: [string, string, unknown?][] = [
    ['POST', '/sites/c-shop/block'], ['POST', '/sites/c-shop/unblock'], ['PUT', '/senders/c-shop', { muted: true }],
    ['POST', '/inbox/x/read'], ['DELETE', '/inbox/x'], ['DELETE', '/orgs/o/members/a'],
    ['POST', '/sites/c-shop/remove-access'], ['POST', '/remove-access'],
    ['DELETE', '/sessions/x'], ['POST', '/sessions/end-others'], ['POST', '/sessions/end-all'],
  ];

  /** What a change would have touched: the sites' states, the sender settings and the sessions. */
  async function state(agent: Agent) {
    return [(await api(agent, 'GET', '/sites')).body, (await api(agent, 'GET', '/senders')).body, ((await api(agent, 'GET', '/sessions')).body as Json[]).length];
  }

  it('refuses every state-changing route from another origin, or without Origin and Sec-Fetch-Site (403), and leaves things as they were', async () => {
    const { agent } = await person('origin@example.com');
    const before = await state(agent);
    const refusedHeaders: Record<string, string>[] = [
      { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, {},
      // A sandboxed frame or a data: page sends `Origin: null`; Sec-Fetch-Site wins over an Origin that matches.
      { origin: 'null' }, { 'sec-fetch-site': 'none' }, { 'sec-fetch-site': 'cross-site', origin: h.issuer },
      { origin: h.issuer.replace('http:', 'https:') },
    ];
    for (const headers of refusedHeaders) {
      for (const [method, path, body] of CHANGES) {
        const res = await api(agent, method, path, body, headers);
        expect({ route: `${method} ${path} ${JSON.stringify(headers)}`, status: res.status, body: res.body }).to.deep.equal({
          route: `${method} ${path} ${JSON.stringify(headers)}`, status: 403, body: { error: 'invalid_request', error_description: 'cross-origin request refused' },
        });
      }
    }
    expect(await state(agent)).to.deep.equal(before);
    // The browser's own same-origin request passes.
    expect((await api(agent, 'PUT', '/senders/c-shop', { muted: true }, { 'sec-fetch-site': 'same-origin' })).status).to.equal(200);
  });

  it('refuses what a page elsewhere can send without asking (a form or text/plain body, no preflight) before reading it', async () => {
    const { agent } = await person('simple@example.com');
    const before = await state(agent);
    const bodies: [string, string][] = [['application/x-www-form-urlencoded', 'muted=true'], ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="muted"\r\n\r\ntrue\r\n--x--\r\n'], ['text/plain', '{"muted":true}']];
    for (const [type, body] of bodies) {
      for (const [method, path] of CHANGES) {
        for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, {}] as Record<string, string>[]) {
          const res = await api(agent, method, path, body, { 'content-type': type, ...headers });
          expect({ route: `${method} ${path} ${type} ${JSON.stringify(headers)}`, status: res.status }).to.deep.equal({ route: `${method} ${path} ${type} ${JSON.stringify(headers)}`, status: 403 });
        }
      }
    }
    expect(await state(agent)).to.deep.equal(before);
    // From the service's own page, such a body is no JSON: 400, nothing changed.
    const own = await api(agent, 'PUT', '/senders/c-shop', '{"muted":true}', { 'content-type': 'text/plain', origin: h.issuer });
    expect({ status: own.status, body: own.body }).to.deep.equal({ status: 400, body: { error: 'invalid_request', error_description: 'content type must be application/json' } });
    expect(await state(agent)).to.deep.equal(before);
  });

  it('changes nothing on a GET or HEAD of a route that changes (404 no such route, from any origin)', async () => {
    const { agent } = await person('get-changes@example.com');
    const before = await state(agent);
    for (const [method, path] of CHANGES) {
      for (const read of ['GET', 'HEAD']) {
        const res = await api(agent, read, path, undefined, { origin: 'https://evil.example' });
        const want = read === 'GET' ? { error: 'not_found', error_description: 'no such route' } : undefined;
        expect({ route: `${read} ${path} (${method})`, status: res.status, body: res.body }).to.deep.equal({ route: `${read} ${path} (${method})`, status: 404, body: want });
      }
    }
    expect(await state(agent)).to.deep.equal(before);
  });

  it('lists connected sites with what they may do', async () => {
    const { agent } = await person('sites@example.com');
    const sites = (await api(agent, 'GET', '/sites')).body as Json[];
    expect(sites.map((s) => s.clientId).sort()).to.deep.equal(['c-news', 'c-shop']);
    const site = sites.find((s) => s.clientId === 'c-shop')!;
    expect(site).to.include({ name: 'Shop', uri: 'https://shop.example', logoUri: 'https://shop.example/logo.png', offlineAccess: false, status: 'connected' });
    expect(site.scopes).to.deep.equal(['openid', 'email']);
    expect(Date.parse(site.firstSignInAt as string)).to.be.closeTo(Date.now(), 60_000);
    expect(site.lastSignInAt).to.be.a('string');
    // The sign-in's code exchange was the site's first use of its access.
    expect(Date.parse(site.lastUsedAt as string)).to.be.closeTo(Date.now(), 60_000);
    expect(Object.keys(site).sort()).to.deep.equal(['clientId', 'firstSignInAt', 'lastSignInAt', 'lastUsedAt', 'logoUri', 'name', 'offlineAccess', 'scopes', 'status', 'uri']);
  });

  it('senders: defaults from the category table; a change applies to the next /api/notify; a blocked site is no sender', async () => {
    const { agent, shopSub } = await person('senders@example.com');
    const defaults = { transactional: 'account_and_email', product: 'account', promotions: 'off' };
    expect((await api(agent, 'GET', '/senders')).body).to.have.deep.members([
      { clientId: 'c-news', name: 'News', muted: false, categories: defaults },
      { clientId: 'c-shop', name: 'Shop', muted: false, categories: defaults },
    ]);

    expect((await notify(shop, shopSub, { category: 'promotions' })).json).to.deep.equal({ inApp: false, email: false, skipped: 'category_off' });
    const put = await api(agent, 'PUT', '/senders/c-shop', { categories: { promotions: 'account' } });
    expect(put).to.deep.include({ status: 200, body: { clientId: 'c-shop', muted: false, categories: { transactional: 'account_and_email', product: 'account', promotions: 'account' } } });
    expect((await notify(shop, shopSub, { category: 'promotions' })).json).to.deep.equal({ inApp: true, email: false, skipped: null });
    expect((await api(agent, 'PUT', '/senders/c-shop', { muted: true })).status).to.equal(200);
    expect((await notify(shop, shopSub, { category: 'promotions' })).json).to.deep.equal({ inApp: false, email: false, skipped: 'muted' });

    expect((await api(agent, 'POST', '/sites/c-news/block')).status).to.equal(204);
    const senders = (await api(agent, 'GET', '/senders')).body as Json[];
    expect(senders.map((s) => s.clientId)).to.deep.equal(['c-shop']);
    expect((await api(agent, 'PUT', '/senders/c-news', { muted: false })).body).to.deep.equal({ error: 'not_found', error_description: 'no such sender: a site you signed in to and did not block' });
  });

  it('senders: answers 400 naming what is wrong in a bad body', async () => {
    const { agent } = await person('badbody@example.com');
    const bad = async (body: unknown, description: string, type?: string) => {
      const res = await api(agent, 'PUT', '/senders/c-shop', body, { origin: h.issuer, ...(type ? { 'content-type': type } : {}) });
      expect({ status: res.status, body: res.body }).to.deep.equal({ status: 400, body: { error: 'invalid_request', error_description: description } });
    };
    await bad({ muted: 'yes' }, 'muted: Invalid input: expected boolean, received string');
    await bad({ categories: { promotions: 'sometimes' } }, 'categories.promotions: Invalid option: expected one of "account_and_email"|"account"|"off"');
    await bad({ categories: { news: 'off' } }, 'unknown field "categories.news"');
    await bad({ volume: 11 }, 'unknown field "volume"');
    await bad('{"muted":', 'body is not valid JSON');
    await bad('muted=true', 'content type must be application/json', 'application/x-www-form-urlencoded');
    await bad({ muted: true, pad: 'x'.repeat(5000) }, 'request body exceeds 4096 bytes');
    await bad({ categories: { news: 'off', weather: 'off' } }, 'unknown field "categories.news", "categories.weather"');
    await bad('null', 'body: Invalid input: expected object, received null');
    expect(((await api(agent, 'GET', '/senders')).body as Json[]).every((s) => s.muted === false)).to.equal(true);
  });

  it('answers reads with no-store, a CSP and nosniff, and allows them from any origin (a page elsewhere cannot read them: no CORS)', async () => {
    const { agent } = await person('reads@example.com');
    for (const method of ['GET', 'HEAD']) {
      for (const headers of [{ origin: h.issuer }, { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
        const res = await api(agent, method, '/sites', undefined, headers);
        expect({ method, headers, status: res.status }).to.deep.equal({ method, headers, status: 200 });
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.headers.get('content-security-policy')).to.equal("default-src 'none'; frame-ancestors 'none'");
        expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(res.headers.get('access-control-allow-origin')).to.equal(null);
      }
    }
  });

  it('answers 404 for a site never used: unblock, and changing it as a sender', async () => {
    const { agent } = await person('never@example.com');
    const notFound = (description: string) => ({ status: 404, body: { error: 'not_found', error_description: description } });
    expect(await api(agent, 'POST', '/sites/c-nowhere/unblock')).to.deep.include(notFound('you never signed in to this site'));
    expect(await api(agent, 'PUT', '/senders/c-nowhere', { muted: true })).to.deep.include(notFound('no such sender: a site you signed in to and did not block'));
  });

  it('inbox: newest first, unread count, pages by cursor, read and delete', async () => {
    const { agent, shopSub, newsSub } = await person('inbox@example.com');
    for (let i = 1; i <= 25; i += 1) {
      expect((await notify(i % 2 ? shop : news, i % 2 ? shopSub : newsSub, { title: `Message ${i}`, body: `Body ${i}\nhttps://x.example/${i}`, ...(i === 25 ? { url: 'https://shop.example/25' } : {}) })).json.inApp).to.equal(true);
    }
    const first = (await api(agent, 'GET', '/inbox')).body as { items: Json[]; unread: number; next: string | null };
    expect(first.unread).to.equal(25);
    expect(first.items.map((i) => i.title)).to.deep.equal(Array.from({ length: 20 }, (_, k) => `Message ${25 - k}`));
    expect(first.items[0]).to.deep.include({ clientId: 'c-shop', siteName: 'Shop', category: 'product', body: 'Body 25\nhttps://x.example/25', url: 'https://shop.example/25', read: false });
    expect(Object.keys(first.items[0]!).sort()).to.deep.equal(['body', 'category', 'clientId', 'id', 'read', 'receivedAt', 'siteName', 'title', 'url']);
    expect(first.next).to.be.a('string');
    const second = (await api(agent, 'GET', `/inbox?cursor=${encodeURIComponent(first.next!)}`)).body as typeof first;
    expect(second.items.map((i) => i.title)).to.deep.equal(['Message 5', 'Message 4', 'Message 3', 'Message 2', 'Message 1']);
    expect(second.next).to.equal(null);

    const id = first.items[0]!.id as string;
    expect((await api(agent, 'POST', `/inbox/${id}/read`)).status).to.equal(204);
    expect((await api(agent, 'POST', `/inbox/${id}/read`)).status).to.equal(204);
    const afterRead = (await api(agent, 'GET', '/inbox')).body as typeof first;
    expect(afterRead.unread).to.equal(24);
    expect(afterRead.items[0]).to.deep.include({ id, read: true });
    expect((await api(agent, 'DELETE', `/inbox/${id}`)).status).to.equal(204);
    expect((await api(agent, 'DELETE', `/inbox/${id}`)).body).to.deep.equal({ error: 'not_found', error_description: 'no such message' });
    expect((await api(agent, 'POST', '/inbox/nope/read')).body).to.deep.equal({ error: 'not_found', error_description: 'no such message' });
    // An empty or repeated cursor is no cursor: the first page.
    for (const query of ['?cursor=', '?cursor=a&cursor=b']) {
      const page = await api(agent, 'GET', `/inbox${query}`);
      expect(page.status, query).to.equal(200);
      expect((page.body as typeof first).items[0]!.title, query).to.equal('Message 24');
    }
    expect(((await api(agent, 'GET', '/inbox')).body as typeof first).items[0]!.title).to.equal('Message 24');
    expect((await api(agent, 'GET', '/inbox?cursor=garbage')).body).to.deep.equal({ error: 'invalid_request', error_description: 'cursor: not a cursor from this inbox' });

    // Someone else's message is not there for them.
    const other = await person('inbox-other@example.com');
    expect((await api(other.agent, 'DELETE', `/inbox/${first.items[1]!.id as string}`)).status).to.equal(404);
  });
});
