/**
 * `npm start`: the reference identity provider. With no REDIS_URL it runs on
 * the embedded in-memory store; with no SMTP_URL letters are printed here.
 */
import { createReferenceProvider } from './reference/provider.ts';
import { ConfigurationError, settingsFromEnv } from './reference/settings.ts';

let settings;
try {
  settings = settingsFromEnv(process.env);
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

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await reference.close();
    settings.redis?.disconnect();
    process.exit(0);
  });
}
