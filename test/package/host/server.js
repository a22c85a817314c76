// The host's server: the README's provider.js, its own sign-in step, listening
// on the port the test gave. Prints one line per plugin event, so the test
// sees what a host listening to them sees.
import { REPLAY_EVENT } from 'oidc-signout-notify';

import { plugin, provider, redis } from './provider.js';
import { mountAccountEvents, mountInteractions } from './your-app.js';

mountInteractions(provider, plugin.store);
mountAccountEvents(provider, plugin);
plugin.on(REPLAY_EVENT, (event) => console.log(`event ${REPLAY_EVENT} ${JSON.stringify(event)}`));

const server = provider.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${process.version}`));
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  plugin.close().then(() => redis.quit());
});
