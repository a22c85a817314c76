/**
 * `npm start`: the reference identity provider. With no REDIS_URL it runs on
 * the embedded in-memory store; with no SMTP_URL letters are printed here.
 *
 * When the configuration (CONFIG_FILE) has the `demo-site` client, the demo
 * relying site (examples/demo-site) runs beside it on http://localhost:DEMO_PORT
 * (default 3001); without that client the provider runs alone.
 */
import { createServer, type Server } from 'node:http';

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

const reference = await createReferenceProvider(settings);
await reference.listen(settings.port);
console.log(`Identity provider listening on ${settings.issuer} (discovery: ${settings.issuer}/.well-known/openid-configuration)`);

// Prometheus metrics on a listener of their own (METRICS_PORT), not the public one.
let metricsServer: Server | undefined;
if (settings.metrics) {
  const { registry } = reference.operations;
  metricsServer = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text), () => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => metricsServer!.listen(settings.metrics!.port, settings.metrics!.host, resolve));
  console.log(`Metrics on http://${settings.metrics.host}:${settings.metrics.port}/metrics`);
}

// Back-channel logout to the demo site goes to localhost, which oidc-provider's
// guard refuses unless listed: settings.ts lists it for an issuer on localhost
// only; any other issuer must say so in ALLOW_PRIVATE_FETCH_HOSTS.
if (settings.allowPrivateFetchHosts!.length > 0) {
  console.log(`Back-channel logout and Shared Signals push may reach these hosts on private addresses: ${settings.allowPrivateFetchHosts!.join(', ')}.`);
} else if (demo) {
  console.warn('Back-channel logout to the demo site (localhost) is refused for this issuer; set ALLOW_PRIVATE_FETCH_HOSTS=localhost to allow it.');
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

// Graceful stop: readiness 503 at once, no new connection, requests in flight
// and the letter in hand finished, Redis closed; at most SHUTDOWN_TIMEOUT_MS.
// A second signal ends the process at once.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    const started = Date.now();
    console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), message: 'shutting down: finishing requests in flight and the letter in hand', signal }));
    for (const other of ['SIGINT', 'SIGTERM'] as const) process.once(other, () => process.exit(1));
    const finished = await reference.shutdown(settings.shutdownTimeoutMs);
    await site?.close();
    metricsServer?.close();
    await settings.redis?.quit().catch(() => settings.redis?.disconnect());
    console.log(JSON.stringify({ level: finished ? 'info' : 'warn', time: new Date().toISOString(), message: finished ? 'shut down' : 'shut down: the bound was reached, connections cut', ms: Date.now() - started }));
    process.exit(0);
  });
}
