import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

/** A free TCP port on 127.0.0.1 for a server process of the bench: listen on port 0, note the port, close. */
export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
