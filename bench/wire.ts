/**
 * What a server process of the benchmark sends to Redis, counted on its
 * ioredis connection (A, C and D): bench/server-process.ts reports it.
 */
import { createHash } from 'node:crypto';

import type { Redis } from 'ioredis';

/** Counts what this process sends to Redis on one ioredis connection: every command, and round trips as the store counts them. */
export interface WireCounter {
  commands: number;
  roundTrips: number;
  byName: Map<string, number>;
  /**
   * Script calls by the script's SHA-1 (which of the plugin's scripts ran):
   * EVALSHA, and the EVAL the store sends when Redis did not know the script
   * yet, so that a script's first call counts as that script too.
   */
  byScript: Map<string, number>;
}

/**
 * Wraps `sendCommand` of one ioredis client. Unlike the store's own counters
 * this sees everything on the connection, BullMQ's letter queue included. A
 * round trip starts when a command is sent while none is in flight, so it is
 * meaningful with one request at a time only.
 */
export function countWire(client: Redis): WireCounter {
  const counter: WireCounter = { commands: 0, roundTrips: 0, byName: new Map(), byScript: new Map() };
  let inflight = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command, stream) => {
    counter.commands += 1;
    counter.byName.set(command.name, (counter.byName.get(command.name) ?? 0) + 1);
    const sha = command.name === 'evalsha' ? String(command.args[0])
      : command.name === 'eval' ? createHash('sha1').update(String(command.args[0])).digest('hex') : undefined;
    if (sha !== undefined) counter.byScript.set(sha, (counter.byScript.get(sha) ?? 0) + 1);
    if (inflight === 0) counter.roundTrips += 1;
    inflight += 1;
    const done = () => { inflight -= 1; };
    command.promise.then(done, done);
    return send(command, stream);
  }) as typeof client.sendCommand;
  return counter;
}

