/**
 * A model of the refresh chain, checked by random sequences of what sites and
 * people do, through HTTP against the reference provider (fast-check's
 * model-based testing: fc.commands and fc.asyncModelRun), on a redis-server
 * of its own (single node) and on the embedded store.
 *
 * The model says what the rules allow (docs/reuse-leeway.md "Refresh that survives a lost
 * answer", "Theft detection and revocation", "Loss of access", SPEC "Revoke a
 * token"), not what the code does today:
 * - a chain's last refresh token rotates while the chain lives (200, a new one);
 * - within the reuse leeway a confidential site presenting the token it
 *   rotated last gets that rotation's answer again, byte for byte, while the
 *   answer's refresh token is unused and nothing ended the chain or revoked a
 *   token of that answer; public sites get no leeway;
 * - any other rotated token presented again is a reuse: 400 invalid_grant,
 *   every chain of the person at the site ends, reported exactly once;
 * - a revoked refresh token is refused (400, nothing reported); revoking the
 *   last one closes the chain, its access tokens keep their state; revoking
 *   an access token leaves the chain going;
 * - Block site, Remove access, removal from the organization (also one whose
 *   revocation was cut off: membership is checked again) end the chains at
 *   the site; sign-out and sign out everywhere end the session's chains
 *   without offline_access; an ended chain issues nothing, leeway included;
 * - a write Redis refuses is a 503 with Retry-After, and nothing changed.
 * After every step every token seen is introspected against the model, and
 * the reuses reported are counted.
 *
 * CHAIN_MODEL_SEED and CHAIN_MODEL_RUNS change the seed and the number of
 * runs; CHAIN_MODEL_PATH and CHAIN_MODEL_REPLAY_PATH replay a reported
 * counterexample (fast-check prints both); CHAIN_MODEL_OMIT (steps' or sites'
 * names, comma-separated) leaves them out, to look for the next hole while one
 * is known; CHAIN_MODEL_NO_SHRINK=1 reports the first failure as it is;
 * CHAIN_MODEL_VERBOSE=1 prints every run's steps and a tally of outcomes.
 */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type * as oidc from 'openid-client';

import { defaultLoginCodeLimits } from '../../examples/reference/login-codes.ts';
import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';
import { Agent } from '../helpers/agent.ts';
import { signIn, startHarness, type Harness } from '../helpers/reference.ts';
import { startRedisServer, type OwnedRedis } from '../helpers/redis-server.ts';
import { asSite, discoverSite } from '../helpers/site.ts';

import { LEEWAY, SEED, RUNS, VERBOSE, BROWSERS, type SiteName, SITE_NAMES, CLIENTS, ORG, ADMIN, type Model, type Real } from '../helpers/chain-model/model.ts';
import { commandArbitrary } from '../helpers/chain-model/arbitrary.ts';

for (const kind of ['redis', 'embedded'] as const) {
  describe(`the refresh chain against its model (${kind}${kind === 'redis' ? ', a redis-server of its own' : ''}; seed ${SEED}, ${RUNS} runs)`, () => {
    let server: OwnedRedis | undefined;
    let control: Redis | undefined;
    let h: Harness;
    let admin: Agent;
    let adminId: string;
    const members: string[] = [];
    const events: ReplayEvent[] = [];
    const lines: Real['lines'] = [];
    const tally = new Map<string, number>();
    let configs: Record<SiteName, oidc.Configuration>;
    let person = 0;

    before(async function () {
      this.timeout(60_000);
      const many = { limit: 100_000, windowMs: 15 * 60_000 };
      const logged = (message: string, fields?: Record<string, unknown>) => { lines.push({ message, fields }); };
      let client: Redis | undefined;
      if (kind === 'redis') {
        // Its own server: the lost-write step refuses writes (min-replicas-to-write), which the shared Redis must never do.
        server = await startRedisServer();
        client = new Redis(server.url, { maxRetriesPerRequest: 2 });
        control = new Redis(server.url, { maxRetriesPerRequest: 2 });
      }
      h = await startHarness(`chain-model-${kind}`, {
        clients: Object.values(CLIENTS),
        ...(client ? { client } : { embedded: true }),
        logger: { info: logged, warn: logged, error: logged },
        loginCodeLimits: { ...defaultLoginCodeLimits, perAddress: many, perIp: many, checksPerIp: many },
        organizations: [{ id: ORG, name: 'Acme', admins: [ADMIN], members: [], clients: [CLIENTS.org.client_id] }],
        plugin: { refreshReuseLeeway: LEEWAY / 1000 },
      });
      h.reference.plugin.on(REPLAY_EVENT, (e) => { events.push(e); });
      configs = Object.fromEntries(await Promise.all(SITE_NAMES.map(async (s) => [s, await discoverSite(h, CLIENTS[s])]))) as Record<SiteName, oidc.Configuration>;
      adminId = (await h.reference.accounts.findOrCreate(ADMIN)).accountId;
      admin = new Agent();
      await signIn(h, configs.org, admin, ADMIN);
    });
    after(async () => {
      if (VERBOSE) console.log(`steps run (${kind}):\n${[...tally].sort().map(([k, n]) => `  ${k}: ${n}`).join('\n')}`);
      await h?.close();
      await control?.quit();
      await server?.close();
    });

    /** A fresh person (a member of the organization) and two fresh browsers for each run. */
    async function setup(): Promise<{ model: Model; real: Real }> {
      person += 1;
      const email = `chain-${kind}-${person}@acme.example`;
      const { accountId } = await h.reference.accounts.findOrCreate(email);
      members.push(accountId);
      h.reference.plugin.organizations.define([{ id: ORG, name: 'Acme', admins: [adminId], members: [...members], clients: [CLIENTS.org.client_id] }]);
      return {
        model: {
          chains: [], sessions: Array.from({ length: BROWSERS }, () => null), nextSession: 1,
          everAt: new Set(), blocked: new Set(), removedFromOrg: false, leewayOpen: false, trace: [],
        },
        real: {
          h, email, accountId, admin, configs, events, lines, tally,
          agents: Array.from({ length: BROWSERS }, () => new Agent()),
          sites: { conf: asSite(h, CLIENTS.conf), pub: asSite(h, CLIENTS.pub), org: asSite(h, CLIENTS.org) },
          ...(control ? { refuseWrites: async (on: boolean) => { await control!.config('SET', 'min-replicas-to-write', on ? '1' : '0'); } } : {}),
        },
      };
    }

    it('follows the model after every step of random sequences of refreshes, retries, lost answers and writes, revocations, endings and theft', async function () {
      this.timeout(20 * 60_000);
      await fc.assert(
        fc.asyncProperty(
          fc.commands([commandArbitrary(kind === 'redis')], { maxCommands: 40, size: 'max', replayPath: process.env.CHAIN_MODEL_REPLAY_PATH }),
          async (cmds) => {
            const run = await setup();
            await fc.asyncModelRun(() => run, cmds);
            if (VERBOSE) console.log(`run of ${run.real.email} (${[...cmds].length} commands generated):\n${run.model.trace.map((line, i) => `  ${i + 1}. ${line}`).join('\n')}`);
          },
        ),
        { numRuns: RUNS, seed: SEED, path: process.env.CHAIN_MODEL_PATH, endOnFailure: process.env.CHAIN_MODEL_NO_SHRINK === '1' },
      );
    });
  });
}
