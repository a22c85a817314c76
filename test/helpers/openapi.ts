/**
 * Answers checked against the OpenAPI document (src/api/openapi/): the
 * operation found by method and path, the status one it documents, the
 * content type its, the body valid against that status' schema (JSON Schema
 * 2020-12, by ajv), and the headers it requires there and valid. Every
 * /api/notify answer the tests get goes through here (docs/api.md); the
 * consumer test checks against the document of the installed tarball.
 */
import { expect } from 'chai';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { openApiJson } from '../../src/api/openapi/document.ts';

type Schema = Record<string, unknown>;
interface Response { description: string; headers?: Record<string, { required?: boolean; schema: Schema }>; content?: Record<string, { schema: Schema }> }
export interface OpenApiDocument { openapi: string; paths: Record<string, Record<string, { responses: Record<string, Response> }>> }

/** An answer as the helper reads it: the body as text. */
export interface Answer { status: number; headers: Headers; body: string }

/** The document the sources generate: the bytes the build writes and the plugin serves. */
export const sourceDocument = JSON.parse(openApiJson()) as OpenApiDocument;

/** One ajv per document: its schemas compiled once, by JSON pointer into the document. */
const validators = new WeakMap<OpenApiDocument, (pointer: string) => ValidateFunction>();

function validatorFor(document: OpenApiDocument): (pointer: string) => ValidateFunction {
  let found = validators.get(document);
  if (!found) {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    // The OpenAPI words a Schema Object may hold beside JSON Schema's (OAS 3.1 section 4.8.24).
    ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    // The whole document is the resource its `$ref`s point into; its own members (openapi, info, paths...) are no JSON Schema words.
    for (const key of Object.keys(document)) if (!ajv.getKeyword(key)) ajv.addKeyword(key);
    ajv.addSchema(document as unknown as Schema, 'openapi.json');
    const compiled = new Map<string, ValidateFunction>();
    found = (pointer) => {
      if (!compiled.has(pointer)) compiled.set(pointer, ajv.compile({ $ref: `openapi.json#${pointer}` }));
      return compiled.get(pointer)!;
    };
    validators.set(document, found);
  }
  return found;
}

const pointer = (...parts: string[]) => parts.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
const problemsOf = (validate: ValidateFunction) => (validate.errors ?? []).map((e) => `${e.instancePath || '(the whole)'} ${e.message}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}${e.params && 'additionalProperty' in e.params ? ` "${String(e.params.additionalProperty)}"` : ''}`);

/** A header's text as its schema reads it (style `simple`): numbers as numbers, the rest as text. */
function headerValue(value: string, schema: Schema): unknown {
  if ((schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

/** The document's path template that `pathname` ends with (the issuer may have a path of its own). */
function documentedPath(document: OpenApiDocument, pathname: string): string | undefined {
  return Object.keys(document.paths).find((template) => {
    const pattern = template.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
    return new RegExp(`${pattern}$`).test(pathname);
  });
}

/** What is wrong with `answer` to `method url` by the document; empty when it matches. */
export function answerProblems(method: string, url: string | URL, answer: Answer, document: OpenApiDocument = sourceDocument): string[] {
  const { pathname } = new URL(url, 'http://localhost');
  const path = documentedPath(document, pathname);
  const at = `${method.toUpperCase()} ${pathname} ${answer.status}`;
  if (!path) return [`${at}: no path of the document matches`];
  const operation = document.paths[path]![method.toLowerCase()];
  if (!operation) return [`${at}: the document has no ${method.toUpperCase()} for ${path}`];
  const family = `${String(answer.status)[0]}XX`;
  const status = [String(answer.status), family, 'default'].find((s) => operation.responses[s]);
  if (!status) return [`${at}: status not documented (it documents ${Object.keys(operation.responses).join(', ')})`];
  const response = operation.responses[status]!;
  const validate = validatorFor(document);
  const base = pointer('paths', path, method.toLowerCase(), 'responses', status);
  const problems: string[] = [];

  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const value = answer.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${at}: header ${name} missing`);
      continue;
    }
    const check = validate(`${base}${pointer('headers', name, 'schema')}`);
    if (!check(headerValue(value, header.schema))) problems.push(...problemsOf(check).map((p) => `${at}: header ${name} "${value}": ${p}`));
  }

  const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!response.content) {
    if (answer.body !== '') problems.push(`${at}: a body where the document says none`);
    return problems;
  }
  if (!response.content[type]) return [...problems, `${at}: content type "${type}", not ${Object.keys(response.content).join(' or ')}`];
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return [...problems, `${at}: the body is not JSON: ${answer.body.slice(0, 200)}`];
  }
  const check = validate(`${base}${pointer('content', type, 'schema')}`);
  if (!check(body)) problems.push(...problemsOf(check).map((p) => `${at}: body ${p}: ${answer.body.slice(0, 300)}`));
  return problems;
}

/** Fails the test when the answer is not as the document says. */
export function expectDocumented(method: string, url: string | URL, answer: Answer, document?: OpenApiDocument): void {
  expect(answerProblems(method, url, answer, document), 'the answer as the OpenAPI document says (test/helpers/openapi.ts)').to.deep.equal([]);
}

/** fetch(), with the answer checked against the document; the Response is handed back unread. */
export async function documentedFetch(url: string | URL, init: RequestInit = {}, document?: OpenApiDocument): Promise<globalThis.Response> {
  const res = await fetch(url, init);
  const body = await res.clone().text();
  expectDocumented(init.method ?? 'GET', url, { status: res.status, headers: res.headers, body }, document);
  return res;
}

/** An HTTP/1.1 answer as a raw socket got it (test/e2e/early-answers.test.ts): status, headers, body (Koa sends a Content-Length). */
export function rawAnswer(raw: string): Answer {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
  const headers = new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]));
  if (headers.has('transfer-encoding')) throw new Error(`rawAnswer: a ${headers.get('transfer-encoding')} body is not read here`);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(split + 4) };
}
