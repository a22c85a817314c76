/**
 * The demo site on its own: `node examples/demo-site/start.ts`.
 *
 *   ISSUER         the provider (default http://localhost:3000)
 *   CLIENT_ID      default demo-site
 *   CLIENT_SECRET  default: that client's secret in examples/config.json
 *   DEMO_PORT      default 3001; the site is http://localhost:$DEMO_PORT, which
 *                  must match the client's registered redirect_uris
 *
 * `npm start` already runs it beside the reference provider; this script is
 * for pointing it at another provider.
 */
import { readFileSync } from 'node:fs';

import { createDemoSite } from './site.ts';

function fail(message: string): never {
  console.error(`Configuration error: ${message}`);
  process.exit(1);
}

const env = process.env;
let issuer: URL;
try {
  issuer = new URL(env.ISSUER ?? 'http://localhost:3000');
} catch {
  fail(`ISSUER: not a URL: ${env.ISSUER}`);
}
const clientId = env.CLIENT_ID ?? 'demo-site';
const port = Number(env.DEMO_PORT ?? 3001);
if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`DEMO_PORT: not a port: ${env.DEMO_PORT}`);

let clientSecret = env.CLIENT_SECRET;
if (!clientSecret) {
  const config = JSON.parse(readFileSync(new URL('../config.json', import.meta.url), 'utf8')) as { clients: { client_id: string; client_secret?: string }[] };
  clientSecret = config.clients.find((c) => c.client_id === clientId)?.client_secret;
  if (!clientSecret) fail(`CLIENT_SECRET: not set, and examples/config.json has no secret for client "${clientId}"`);
}

const baseUrl = `http://localhost:${port}`;
const site = createDemoSite({
  issuer,
  clientId,
  clientSecret,
  baseUrl,
  // Development only: an http:// issuer (the reference provider on localhost).
  allowInsecure: issuer.protocol === 'http:',
});
try {
  await site.listen(port);
} catch (err) {
  console.error(`Demo site: cannot listen on port ${port} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  process.exit(1);
}
console.log(`Demo site listening on ${baseUrl} (client ${clientId}, provider ${issuer.origin})`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await site.close();
    process.exit(0);
  });
}
