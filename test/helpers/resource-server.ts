/**
 * The resource server of the README ("A stronger or fresher sign-in"), run
 * as written there: its code block is read from the README and executed for
 * each request's bearer token, so the README's lines are the ones tested.
 * Past the check it answers 200 "ok".
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';

import * as oidc from 'openid-client';

import { freePort } from './net.ts';

type Check = (lib: typeof oidc, config: oidc.Configuration, accessToken: string, res: ServerResponse) => Promise<unknown>;

/** The README's code block after the line that names the section. */
export function readmeResourceServer(): Check {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const after = readme.slice(readme.indexOf('**A stronger or fresher sign-in**'));
  const block = /```js\n([\s\S]*?)\n\s*```/.exec(after)?.[1];
  if (!block) throw new Error('README: no js block after "A stronger or fresher sign-in"');
  const code = block.split('\n').map((line) => line.replace(/^ {2}/, '')).join('\n');
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => Check;
  return new AsyncFunction('oidc', 'config', 'accessToken', 'res', code);
}

export interface ResourceServer {
  url: string;
  /** GET with `Authorization: Bearer <token>`: the status and the WWW-Authenticate header. */
  call(token: string): Promise<{ status: number; challenge: string | null }>;
  close(): Promise<void>;
}

/** The README's resource server on a free port of 127.0.0.1, introspecting with `config` (its own client at the provider). */
export async function startResourceServer(config: oidc.Configuration): Promise<ResourceServer> {
  const check = readmeResourceServer();
  const port = await freePort();
  const server = createServer((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    check(oidc, config, token, res).then(() => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }, (err: Error) => res.writeHead(500).end(err.message));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    async call(token) {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      await res.text();
      return { status: res.status, challenge: res.headers.get('www-authenticate') };
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
