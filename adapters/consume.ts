import { errors } from 'oidc-provider';
import type { AdapterPayload } from 'oidc-provider';

import * as commands from '../src/store/commands.ts';
import { decodeConsume, type ConsumeOutcome } from '../src/store/replies.ts';
import type { Store } from '../src/store/store.ts';
import type { AdapterKeys } from './keys.ts';
import type { Leeway } from './leeway.ts';
import type { Records } from './records.ts';
import type { RequestStates } from './request-state.ts';
import { seal } from './sealed-answer.ts';
import type { StoreAdapterOptions } from './types.ts';

/** A request that lost a refresh race within the leeway: it answers the winner's answer. */
export class LostToLeeway extends Error {}

/**
 * Consuming a code or refresh token exactly once, and what a refusal means:
 * a record consumed by a concurrent request is the theft signal (the chain
 * goes, the person is told through `onReplay`), unless the reuse leeway
 * answers it.
 */
export function createConsume(deps: { store: Store; keys: AdapterKeys; records: Records; leeway: Leeway; states: RequestStates; options: StoreAdapterOptions }) {
  const { store, keys, records, leeway, states, options } = deps;

  /** Whether this request keeps its rotation's answer, and whether it rotates again a rotation whose tokens were never written. */
  function keeping(model: string, id: string, answer: object | undefined, ctx: object | undefined) {
    const keep = answer !== undefined && model === 'RefreshToken' && leeway.keepsAnswer(ctx);
    return { keep, again: keep && states.peek(ctx)?.redoOf === id ? '1' : '0' };
  }

  /** A consume that found the record gone or consumed already: the error to answer, the grant revoked. */
  async function refused(model: string, id: string, outcome: Exclude<ConsumeOutcome, { outcome: 'consumed' }>, ctx?: object): Promise<never> {
    if (outcome.outcome === 'gone') throw new errors.InvalidGrant(`${model} not found`);
    const payload = JSON.parse(outcome.payload) as AdapterPayload;
    // Lost a race with the same token: within the leeway the winner's answer is this one's too.
    if (outcome.answer !== null && (await leeway.withinLeeway(ctx, id, { ...payload, consumed: Math.floor(Date.now() / 1000) }, outcome.answer, outcome.unwritten)) === undefined) {
      throw new LostToLeeway();
    }
    if (payload.grantId) await records.revokeGrant(payload.grantId);
    options.onReplay?.({ model, grantId: payload.grantId, clientId: payload.clientId, accountId: payload.accountId }, ctx);
    throw new errors.InvalidGrant(`${model} already used`);
  }

  return {
    keeping,
    refused,

    /** Marks a record consumed in one atomic step (consume.lua); never recreates a missing one. */
    async markConsumed(model: string, id: string, answer?: object, ctx?: object): Promise<void> {
      const key = keys.record(model, id);
      const { keep, again } = keeping(model, id, answer, ctx);
      const outcome = decodeConsume(await store.run(
        commands.consume(),
        keep ? [key, keys.answer(key), keys.unwritten(key)] : [key],
        keep ? [Math.floor(Date.now() / 1000), seal(answer!, id), leeway.leewayMs, again] : [Math.floor(Date.now() / 1000)],
      ));
      if (outcome.outcome !== 'consumed') await refused(model, id, outcome, ctx);
    },
  };
}

export type Consume = ReturnType<typeof createConsume>;
