/**
 * `--d-reads-as-a` (npm run bench, npm run bench:instructions): A's token read
 * as A sends it for one of its access tokens (token_read.lua with the session
 * and grant key parts), for D to send instead of a PING: B plus A's Redis
 * command and its reply, without the plugin around it.
 */
import type { Redis } from 'ioredis';

import { adapterKeys, tokenReadKeyParts } from '../../adapters/store-adapter.ts';
import { tokenRead } from '../../src/store/commands.ts';
import type { FloorRoute } from '../servers.ts';

/** The command for one of A's access tokens (`token`) under A's key prefix; checks it finds the token, its session and its grant. */
export async function aTokenRead(redis: Redis, prefix: string, token: string): Promise<NonNullable<FloorRoute['command']>> {
  const script = tokenRead();
  await redis.script('LOAD', script.lua);
  const parts = tokenReadKeyParts(prefix);
  const command = {
    sha: script.sha,
    keys: [adapterKeys(prefix).record('AccessToken', token)],
    argv: [...parts.session, ...parts.grant],
  };
  const reply = await redis.evalsha(command.sha, 1, ...command.keys, ...command.argv) as string | null;
  const [found, , session, grant] = reply === null ? [] : JSON.parse(reply) as unknown[];
  if (found == null || session == null || grant == null) throw new Error('--d-reads-as-a: the token read found no token, session or grant');
  return command;
}
