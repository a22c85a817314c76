/**
 * The reuse leeway's one redo (docs/reuse-leeway.md "Refresh that survives a lost answer":
 * on a Cluster the consume of the old refresh token and the writes of the new
 * tokens go to different masters, so the consume can land while a write is
 * refused. The refresh then answers 503 (its answer never leaves) and records,
 * beside the kept answer, that its new tokens were never written; the
 * client's retry with the old token is a fresh rotation, once. Without that
 * record (a successor that was revoked), the same retry is a reuse.
 * Runs in the Cluster pass, on its Cluster.
 */
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import * as oidc from 'openid-client';

import { adapterKeys } from '../../adapters/store-adapter.ts';
import { Agent } from '../helpers/agent.ts';
import { clusterClient, REDIS_CLUSTER } from '../helpers/redis.ts';
import { discover, signIn, siteClient, startHarness, type Harness } from '../helpers/reference.ts';
import { REPLAY_EVENT, type ReplayEvent } from '../../src/index.ts';

const site = siteClient('unwritten-site');

describe('a refresh whose new tokens were refused by a Cluster master (the Cluster pass)', () => {
  let h: Harness;
  let admin: Cluster;
  let config: oidc.Configuration;
  const replays: ReplayEvent[] = [];

  before(async () => {
    admin = clusterClient(REDIS_CLUSTER!);
    h = await startHarness('unwritten', { clients: [site], client: clusterClient(REDIS_CLUSTER!), plugin: { refreshReuseLeeway: 30 } });
    h.reference.plugin.on(REPLAY_EVENT, (e) => replays.push(e));
    config = await discover(h, site);
  });
  after(async () => {
    await refuseWritesBut(undefined);
    await h.close();
    await admin.quit();
  });

  /** Every master but the one holding `key` refuses writes (NOREPLICAS); undefined: none does. */
  async function refuseWritesBut(key: string | undefined) {
    const keep = key === undefined ? undefined : admin.slots[calculateSlot(key)]?.[0];
    for (const node of admin.nodes('master') as Redis[]) {
      const address = `${node.options.host}:${node.options.port}`;
      await node.config('SET', 'min-replicas-to-write', key === undefined || address === keep ? '0' : '5');
    }
  }

  const refresh = async (refreshToken: string) => {
    const res = await fetch(`${h.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${site.client_id}:${site.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    });
    return { status: res.status, json: await res.json() as Record<string, string> };
  };

  it('answers 503, and the retry with the old token rotates again, once; the chain goes on and no reuse is reported', async () => {
    await admin.cluster('SLOTS'); // the admin client knows the slots
    let old = '';
    let first = { status: 0, json: {} as Record<string, string> };
    // The new tokens' keys fall on any master: try chains until one of their writes is refused.
    for (let attempt = 0; attempt < 8 && first.status !== 503; attempt += 1) {
      const { tokens } = await signIn(h, config, new Agent(), `unwritten${attempt}@example.com`);
      old = tokens.refresh_token!;
      await refuseWritesBut(adapterKeys(h.prefix).record('RefreshToken', old));
      try {
        first = await refresh(old);
      } finally {
        await refuseWritesBut(undefined);
      }
    }
    expect(first.status, JSON.stringify(first.json)).to.equal(503);
    const reported = replays.length;
    const retried = await refresh(old);
    expect(retried.status, JSON.stringify(retried.json)).to.equal(200);
    expect((await oidc.tokenIntrospection(config, retried.json.access_token!)).active).to.equal(true);
    // That answer is the one kept now, and the chain goes on from it.
    expect((await refresh(old)).json).to.deep.equal(retried.json);
    const next = await refresh(retried.json.refresh_token!);
    expect(next.status).to.equal(200);
    expect(replays.length).to.equal(reported);
  });
});
