/**
 * `npm start`: the reference identity provider. With no REDIS_URL it runs on
 * the embedded in-memory store; with no SMTP_URL letters are printed here.
 *
 * When the configuration (CONFIG_FILE) has the `demo-site` client, the demo
 * relying site (examples/demo-site) runs beside it on http://localhost:DEMO_PORT
 * (default 3001); without that client the provider runs alone.
 */
import type { ClientMetadata } from 'oidc-provider';

import { createDemoSite, type DemoSite } from './demo-site/site.ts';
import { createReferenceProvider } from './reference/provider.ts';
import { ConfigurationError, settingsFromEnv } from './reference/settings.ts';

const DEMO_CLIENT_ID = 'demo-site';
const configFile = process.env.CONFIG_FILE ?? 'examples/config.json';

interface DemoSettings { client: ClientMetadata; clientSecret: string; port: number; baseUrl: string }

/** The demo site's settings when the configuration has its client; undefined otherwise. */
function demoSettings(clients: ClientMetadata[], env: NodeJS.ProcessEnv): DemoSettings | undefined {
  const client = clients.find((c) => c.client_id === DEMO_CLIENT_ID);
  if (!client) return undefined;
  const raw = env.DEMO_PORT ?? '3001';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    throw new ConfigurationError(`environment: DEMO_PORT: must be a port number (1-65535), got "${raw}"`);
  }
  if (typeof client.client_secret !== 'string' || !client.client_secret) {
    throw new ConfigurationError(`CONFIG_FILE ${configFile}: client "${DEMO_CLIENT_ID}": the demo site needs a client_secret`);
  }
  return { client, clientSecret: client.client_secret, port, baseUrl: `http://localhost:${port}` };
}

let settings;
let demo;
try {
  settings = settingsFromEnv(process.env);
  demo = demoSettings(settings.clients, process.env);
} catch (err) {
  if (err instanceof ConfigurationError) {
    console.error(`Configuration error: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

// Back-channel logout to the demo site goes to localhost, which oidc-provider's
// SSRF guard refuses unless listed. Unless ALLOW_PRIVATE_FETCH_HOSTS says
// otherwise, list it (settings.ts already does for an issuer on localhost).
const allowLocalhostForDemo = demo !== undefined && process.env.ALLOW_PRIVATE_FETCH_HOSTS === undefined;
if (allowLocalhostForDemo && !settings.allowPrivateFetchHosts!.includes('localhost')) {
  settings.allowPrivateFetchHosts!.push('localhost');
}

const reference = await createReferenceProvider(settings);
await reference.listen(settings.port);
console.log(`Identity provider listening on ${settings.issuer} (discovery: ${settings.issuer}/.well-known/openid-configuration)`);

if (allowLocalhostForDemo) {
  console.log('ALLOW_PRIVATE_FETCH_HOSTS is not set: back-channel logout may reach localhost (the demo site).');
}

let site: DemoSite | undefined;
if (!demo) {
  console.log(`No "${DEMO_CLIENT_ID}" client in ${configFile}: the demo site is not started, the identity provider runs alone.`);
} else {
  const registered = demo.client.redirect_uris ?? [];
  if (!registered.includes(`${demo.baseUrl}/callback`)) {
    console.warn(`Demo site: client "${DEMO_CLIENT_ID}" in ${configFile} does not register ${demo.baseUrl}/callback (it has ${registered.join(', ') || 'none'}): sign-in will fail; make DEMO_PORT and the client's URIs agree.`);
  }
  const issuer = new URL(settings.issuer);
  const candidate = createDemoSite({
    issuer,
    clientId: DEMO_CLIENT_ID,
    clientSecret: demo.clientSecret,
    baseUrl: demo.baseUrl,
    // Development only: the reference provider's default issuer is http://localhost.
    allowInsecure: issuer.protocol === 'http:',
  });
  try {
    await candidate.listen(demo.port);
    site = candidate;
    console.log(`Demo site listening on ${demo.baseUrl} (client "${DEMO_CLIENT_ID}"; set DEMO_PORT to move it)`);
  } catch (err) {
    // The provider is what `npm start` is for: it keeps running.
    console.error(`Demo site: cannot listen on port ${demo.port} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the identity provider runs without it. Set DEMO_PORT (and the client's URIs) to another port.`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await site?.close();
    await reference.close();
    settings.redis?.disconnect();
    process.exit(0);
  });
}
