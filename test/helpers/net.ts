import { createServer } from 'node:net';

/**
 * Ports the tests hand out: below Linux's ephemeral range (32768-60999),
 * from which the OS picks both port-0 listeners and the source ports of
 * outgoing connections. A port taken from that range could be given to a
 * connection in the seconds before the process it was meant for listens
 * (EADDRINUSE when files run in parallel). The port 10,000 above is free
 * too, and below that range: a Redis Cluster node listens there (its bus).
 */
const FIRST = 10_000;
const COUNT = 12_000;
const BUS = 10_000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    // No host: every address, IPv6 and IPv4, as start.ts listens; taken anywhere, refused here.
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** A free TCP port (free on every address, and its Cluster bus port too), outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 100; i += 1) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (await bindable(port) && await bindable(port + BUS)) return port;
  }
  throw new Error(`no free port among ${FIRST}-${FIRST + COUNT - 1} after 100 tries`);
}
