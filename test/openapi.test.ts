/**
 * The OpenAPI document (src/api/openapi/): valid OpenAPI 3.1 by a standard
 * validator, the same bytes from the same sources, what it says of POST
 * /api/notify taken from the route's own schemas and the error catalog; the
 * helper every /api/notify test checks its answers with, shown to refuse
 * wrong ones; and the document as the plugin serves it.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { NOTIFY_ERRORS } from '../src/api/notify/answers.ts';
import { notificationRequest } from '../src/api/notify/read-request.ts';
import { openApiJson } from '../src/api/openapi/document.ts';
import { ERRORS } from '../src/http/error-codes.ts';
import { isCategory } from '../src/notify/categories.ts';
import { answerProblems, sourceDocument, type Answer } from './helpers/openapi.ts';
import { siteClient, startHarness, type Harness } from './helpers/reference.ts';
import { setUp } from './helpers/set-up.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const doc = sourceDocument as unknown as {
  paths: Record<string, { post: { security: unknown; parameters: { in: string; name: string; required?: boolean }[]; requestBody: unknown; responses: Record<string, {
    headers?: Record<string, { required: boolean }>; content: Record<string, { schema: { properties?: { error: { enum: string[] } } } }>;
  }> } }>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

describe('the OpenAPI document (src/api/openapi/)', () => {
  it('is valid OpenAPI 3.1 by @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(openApiJson()) as Record<string, unknown>);
    expect(result.errors ?? []).to.deep.equal([]);
    expect([result.valid, validator.version]).to.deep.equal([true, '3.1']);
  });

  it('holds only schemas that compile as JSON Schema 2020-12 (ajv, strict), every $ref resolved', () => {
    const ajv = new Ajv2020({ strict: true });
    ajv.addVocabulary(['example', ...Object.keys(sourceDocument)]);
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(sourceDocument as unknown as Record<string, unknown>, 'openapi.json');
    const pointers: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        const here = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        if (key === 'schema') pointers.push(here);
        else walk(value, here);
      }
    };
    walk(sourceDocument.paths, '/paths');
    for (const name of Object.keys(doc.components.schemas)) pointers.push(`/components/schemas/${name}`);
    expect(pointers.length).to.be.above(10);
    for (const pointer of pointers) expect(() => ajv.compile({ $ref: `openapi.json#${pointer}` }), pointer).to.not.throw();
  });

  it('comes out the same bytes from the same sources, in another process too (no time, no machine in it)', () => {
    const elsewhere = execFileSync(process.execPath, ['-e', 'import("./src/api/openapi/document.ts").then((m) => process.stdout.write(m.openApiJson()))'], { cwd: root, encoding: 'utf8' });
    expect(elsewhere).to.equal(openApiJson());
    expect(openApiJson()).to.equal(openApiJson());
  });

  it('describes POST /api/notify: Basic authentication, the Idempotency-Key, the request schema, the 202 and each error the route answers, at its status, with Retry-After and WWW-Authenticate', () => {
    const post = doc.paths['/api/notify']!.post;
    expect(post.security).to.deep.equal([{ clientSecretBasic: [] }]);
    expect(doc.components.securitySchemes.clientSecretBasic).to.include({ type: 'http', scheme: 'basic' });
    expect(post.parameters.map((p) => [p.in, p.name, p.required ?? false])).to.deep.equal([['header', 'Idempotency-Key', false]]);
    expect(post.requestBody).to.deep.equal({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NotificationRequest' } } } });

    const statuses = [...new Set(NOTIFY_ERRORS.map((name) => ERRORS[name].status))].sort();
    expect(Object.keys(post.responses)).to.deep.equal(['202', ...statuses.map(String)]);
    for (const status of statuses) {
      const codes = NOTIFY_ERRORS.filter((name) => ERRORS[name].status === status).map((name) => ERRORS[name].code);
      expect(post.responses[status]!.content['application/json']!.schema.properties!.error.enum, `${status}`).to.deep.equal(codes);
    }
    const required = (status: string) => Object.entries(post.responses[status]!.headers ?? {}).filter(([, h]) => h.required).map(([name]) => name);
    expect(Object.fromEntries(Object.keys(post.responses).map((s) => [s, required(s)]))).to.deep.equal({
      202: [], 400: [], 401: ['WWW-Authenticate'], 403: [], 429: ['Retry-After'], 500: [], 503: ['Retry-After'],
    });
  });

  it('refuses in its request schema what the route refuses for a field: lengths in code points as the route counts them, control characters, the category, unknown fields', () => {
    const ajv = new Ajv2020({ strict: true });
    ajv.addVocabulary(['example', ...Object.keys(sourceDocument)]);
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(sourceDocument as unknown as Record<string, unknown>, 'openapi.json');
    const documented = ajv.compile({ $ref: 'openapi.json#/components/schemas/NotificationRequest' });
    const route = (body: Record<string, unknown>) => {
      const parsed = notificationRequest.safeParse(body);
      return parsed.success && isCategory(parsed.data.category);
    };
    const good = { sub: 'someone', category: 'product', title: 'Hello', body: 'It ships.\n\tToday.', url: 'https://shop.example/o/1' };
    const bodies: Record<string, unknown>[] = [
      good,
      { ...good, url: undefined },
      { ...good, title: '🎉'.repeat(120) },
      { ...good, title: '🎉'.repeat(121) },
      { ...good, title: 'a'.repeat(121) },
      { ...good, title: '' },
      { ...good, title: 'Line\nbreak' },
      { ...good, title: 'C1\u0085' },
      { ...good, body: 'x'.repeat(2000) },
      { ...good, body: 'x'.repeat(2001) },
      { ...good, body: 'CR\r' },
      { ...good, sub: 's'.repeat(256) },
      { ...good, category: 'security' },
      { ...good, category: 7 },
      { ...good, extra: 1 },
      { sub: 'someone', category: 'product', title: 'Hello' },
    ].map((body) => JSON.parse(JSON.stringify(body)) as Record<string, unknown>);
    expect(bodies.map((body) => documented(body))).to.deep.equal(bodies.map(route));
    expect(bodies.map(route).filter(Boolean)).to.have.length(4);
  });
});

describe('the answer check every /api/notify test makes (test/helpers/openapi.ts)', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8', ...headers }),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const check = (a: Answer) => answerProblems('POST', 'http://127.0.0.1:3000/api/notify', a);

  it('passes answers as the route gives them', () => {
    expect(check(answer(202, { inApp: true, email: false, skipped: 'no_email' }))).to.deep.equal([]);
    expect(check(answer(202, { inApp: false, email: false, skipped: null }))).to.deep.equal([]);
    expect(check(answer(400, { error: 'url_not_allowed', error_description: 'x' }))).to.deep.equal([]);
    expect(check(answer(401, { error: 'invalid_client', error_description: 'x' }, { 'www-authenticate': 'Basic realm="notify", charset="UTF-8"' }))).to.deep.equal([]);
    expect(check(answer(429, { error: 'rate_limited', error_description: 'x' }, { 'retry-after': '60' }))).to.deep.equal([]);
    expect(check(answer(503, { error: 'temporarily_unavailable', error_description: 'x' }, { 'retry-after': '2' }))).to.deep.equal([]);
  });

  it('fails a deliberately wrong answer: a member missing or added, a wrong value, an error at another status, a required header missing or wrong, another content type or status, no JSON', () => {
    const at = (status: number) => `POST /api/notify ${status}`;
    const body = '{"inApp":true,"email":true}';
    expect(check(answer(202, body))).to.deep.equal([`${at(202)}: body (the whole) must have required property 'skipped': ${body}`]);
    expect(check(answer(202, { inApp: true, email: true, skipped: null, id: 'n1' }))).to.have.length(1)
      .and.to.match(/must NOT have additional properties "id"/);
    expect(check(answer(202, { inApp: true, email: true, skipped: 'later' }))[0]).to.match(/\/skipped must be equal to one of the allowed values \["muted","category_off","no_email"\]/);
    expect(check(answer(202, { inApp: 'yes', email: true, skipped: null }))[0]).to.match(/\/inApp must be boolean/);
    expect(check(answer(400, { error: 'not_connected', error_description: 'x' }))[0]).to.match(/\/error must be equal to one of the allowed values \["invalid_request","unknown_category","url_not_allowed"\]/);
    expect(check(answer(403, { error: 'not_connected' }))[0]).to.match(/must have required property 'error_description'/);
    expect(check(answer(429, { error: 'rate_limited', error_description: 'x' }))).to.deep.equal([`${at(429)}: header Retry-After missing`]);
    expect(check(answer(503, { error: 'temporarily_unavailable', error_description: 'x' }, { 'retry-after': 'soon' }))[0]).to.match(/header Retry-After "soon": \(the whole\) must be integer/);
    expect(check(answer(401, { error: 'invalid_client', error_description: 'x' }))).to.deep.equal([`${at(401)}: header WWW-Authenticate missing`]);
    expect(check(answer(401, { error: 'invalid_client', error_description: 'x' }, { 'www-authenticate': 'Bearer' }))[0]).to.match(/header WWW-Authenticate "Bearer": \(the whole\) must match pattern "\^Basic "/);
    expect(check({ ...answer(202, {}), headers: new Headers({ 'content-type': 'text/html' }) })).to.deep.equal([`${at(202)}: content type "text/html", not application/json`]);
    expect(check(answer(202, 'Accepted'))).to.deep.equal([`${at(202)}: the body is not JSON: Accepted`]);
    expect(check(answer(404, { error: 'not_found', error_description: 'x' }))).to.deep.equal([`${at(404)}: status not documented (it documents 202, 400, 401, 403, 429, 500, 503)`]);
    expect(answerProblems('GET', 'http://127.0.0.1:3000/api/notify', answer(202, {}))).to.deep.equal(['GET /api/notify 202: the document has no GET for /api/notify']);
    expect(answerProblems('POST', 'http://127.0.0.1:3000/api/notice', answer(202, {}))).to.deep.equal(['POST /api/notice 202: no path of the document matches']);
  });
});

describe('GET /api/openapi.json (the plugin serves the document)', () => {
  let h: Harness;
  setUp(() => startHarness('openapi', { embedded: true, clients: [siteClient('openapi-site')] }), (started) => { h = started; });

  it('answers the document\'s bytes as application/json, with an ETag that a revalidation gets 304 for; from the sources, generated from them', async () => {
    const res = await fetch(`${h.issuer}/api/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-cache');
    expect(await res.text()).to.equal(openApiJson());
    const etag = res.headers.get('etag')!;
    expect(etag).to.match(/^"[\w-]{43}"$/);
    // A Cache-Control of its own: fetch() adds `no-cache` to a conditional request, which asks for the whole answer.
    const again = await fetch(`${h.issuer}/api/openapi.json`, { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    expect([again.status, await again.text(), again.headers.get('etag')]).to.deep.equal([304, '', etag]);
    const changed = await fetch(`${h.issuer}/api/openapi.json`, { headers: { 'if-none-match': '"other"', 'cache-control': 'max-age=0' } });
    expect(changed.status).to.equal(200);
  });
});
