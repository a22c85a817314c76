// The service beside the operator's command (test/package/cli-suite.ts): its
// module (ops-provider.js), listening on the port the test gave.
import { close, plugin, provider, redis } from './ops-provider.js';

const server = provider.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${process.version}`));
process.once('SIGTERM', async () => {
  server.close();
  server.closeAllConnections();
  await plugin.close();
  await redis.quit();
  await close();
});
