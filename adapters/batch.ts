import Provider, { errors } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import { decodeConsume } from '../src/store/replies.ts';
import type { Store } from '../src/store/store.ts';
import { LostToLeeway, type Consume } from './consume.ts';
import { CREDENTIALS, GRANTABLE, withoutId, type AdapterKeys } from './keys.ts';
import type { Leeway } from './leeway.ts';
import type { Records } from './records.ts';
import type { RequestStates, Write } from './request-state.ts';
import { seal } from './sealed-answer.ts';
import type { SiteUse, StoreAdapter } from './types.ts';

/** Index members that expired are dropped on about one batch in PRUNE_EVERY, not on every one. */
const PRUNE_EVERY = 8;

/**
 * The token endpoint's writes (consume the old code or refresh token, save
 * the new tokens) are collected and sent together when the response is
 * ready: one round trip instead of three. See StoreAdapter.batch / flush.
 */
export function createBatch(deps: { store: Store; keys: AdapterKeys; records: Records; consume: Consume; leeway: Leeway; states: RequestStates }) {
  const { store, keys, records, consume, leeway, states } = deps;
  let batchesSincePrune = 0;

  const runWrite = (op: Write, answer?: object, ctx?: object): Promise<void> =>
    (op.consume ? consume.markConsumed(op.model, op.id, answer, ctx) : records.write(op.model, op.id, op.payload, op.expiresIn));

  /**
   * The usual token endpoint batch (at most one code or refresh token
   * consumed, new tokens of one grant saved) goes as one script on a single
   * node; anything else, and every batch on a Cluster, one script per write.
   */
  function oneScript(ops: Write[]): boolean {
    if (!store.singleNode) return false;
    let consumes = 0;
    let grantId: unknown;
    for (const op of ops) {
      if (op.consume) {
        consumes += 1;
        continue;
      }
      if (!GRANTABLE.has(op.model) || typeof op.payload.grantId !== 'string' || op.payload.userCode) return false;
      if (grantId !== undefined && op.payload.grantId !== grantId) return false;
      grantId = op.payload.grantId;
    }
    return consumes <= 1 && grantId !== undefined;
  }

  /** {@link oneScript}'s batch: token_batch.lua. Same outcomes as the writes one by one, nothing written on a refusal. */
  async function flushAsOne(ops: Write[], answer: object | undefined, ctx: object, use: SiteUse | undefined): Promise<void> {
    const consumed = ops.find((op) => op.consume);
    const saved = ops.filter((op): op is Extract<Write, { consume: false }> => !op.consume);
    const grantId = saved[0]!.payload.grantId!;
    const record = consumed ? keys.record(consumed.model, consumed.id) : keys.grantTombstone(grantId);
    const { keep, again } = consumed ? consume.keeping(consumed.model, consumed.id, answer, ctx) : { keep: false, again: '0' };
    const now = Date.now();
    batchesSincePrune = (batchesSincePrune + 1) % PRUNE_EVERY;
    const keyList = [
      record, keep ? keys.answer(record) : record, keys.grantIndex(grantId), keys.grantTombstone(grantId),
      use ? use.sites : record, keep ? keys.unwritten(record) : record,
    ];
    const argv: (string | number)[] = [
      consumed ? Math.floor(now / 1000) : '',
      keep ? '1' : '0',
      keep ? seal(answer!, consumed!.id) : '',
      leeway.leewayMs,
      again,
      now,
      batchesSincePrune === 0 ? '1' : '0',
      use ? use.clientId : '',
      use ? use.at : '',
    ];
    for (const op of saved) {
      keyList.push(keys.record(op.model, op.id));
      argv.push(JSON.stringify(CREDENTIALS.has(op.model) ? withoutId(op.payload) : op.payload), records.ttlMs(op.expiresIn));
    }
    const outcome = decodeConsume(await store.run(commands.tokenBatch(), keyList, argv));
    if (outcome.outcome !== 'consumed') await consume.refused(consumed!.model, consumed!.id, outcome, ctx);
  }

  /**
   * Writes sent one by one (a Cluster) where the consume went through and
   * some of the new tokens' writes did not: recorded beside the kept answer,
   * so that the client's retry within the leeway may rotate again (it holds
   * nothing usable). Best effort: unrecorded, the retry is treated as a reuse.
   */
  async function recordUnwritten(ops: Write[], results: PromiseSettledResult<void>[], answer: object | undefined, ctx: object): Promise<void> {
    const i = ops.findIndex((op) => op.consume);
    const op = ops[i];
    if (!op || results[i]!.status !== 'fulfilled' || !consume.keeping(op.model, op.id, answer, ctx).keep) return;
    await store.run(commands.putTtl(), [keys.unwritten(keys.record(op.model, op.id))], [leeway.leewayMs, 'at', Date.now()]).catch(() => {});
  }

  const api: Pick<StoreAdapter, 'batch' | 'flush' | 'alongside' | 'takeReplay' | 'consumedSource'> = {
    batch(ctx) {
      states.of(ctx).writes = [];
    },
    consumedSource: (ctx) => states.peek(ctx)?.consumed,
    takeReplay(ctx) {
      const state = states.peek(ctx);
      const answer = state?.replay;
      if (state) delete state.replay;
      return answer;
    },
    alongside(ctx, write, use) {
      const state = states.peek(ctx);
      if (!state?.writes) return write();
      (state.beside ??= []).push({ write, use });
    },
    async flush(ctx, discard = false, answer) {
      const state = states.of(ctx);
      const ops = state.writes ?? [];
      const waiting = state.beside ?? [];
      delete state.writes;
      delete state.beside;
      const asOne = !discard && ops.length > 0 && oneScript(ops);
      // One site use rides inside the script (one command fewer); anything else goes beside it.
      const folded = asOne ? waiting.find((w) => w.use) : undefined;
      for (const w of waiting) if (w !== folded) w.write();
      if (discard || ops.length === 0) return undefined;
      if (asOne) {
        // Nothing is written when the consume is refused: nothing to take back.
        try {
          await flushAsOne(ops, answer, ctx, folded?.use);
          return undefined;
        } catch (err) {
          if (err instanceof LostToLeeway) return undefined;
          if (err instanceof errors.InvalidGrant) return err as Error;
          throw err;
        }
      }
      const results = await Promise.allSettled(ops.map((op) => runWrite(op, answer, ctx)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (!failed) return undefined;
      if (failed.reason instanceof LostToLeeway) {
        // The client gets the winner's answer (takeReplay): what this request wrote nobody holds.
        await store.del(ops.flatMap((op) => (op.consume ? [] : [keys.record(op.model, op.id)])));
        return undefined;
      }
      if (failed.reason instanceof errors.InvalidGrant) return failed.reason as Error;
      await recordUnwritten(ops, results, answer, ctx);
      throw failed.reason;
    },
  };

  return {
    ...api,
    /** The writes this request collects, when the token endpoint's step started a batch for it. */
    collecting: () => states.peek(Provider.ctx)?.writes,
  };
}
