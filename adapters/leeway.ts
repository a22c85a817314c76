import type { AdapterPayload, KoaContextWithOIDC } from 'oidc-provider';

import type { Store } from '../src/store/store.ts';
import { proofMatches } from './dpop-proof.ts';
import type { AdapterKeys } from './keys.ts';
import type { Records } from './records.ts';
import type { RequestStates } from './request-state.ts';
import { open } from './sealed-answer.ts';
import type { StoreAdapterOptions } from './types.ts';

type TokenContext = KoaContextWithOIDC | undefined;
type Bound = { jkt?: unknown; 'x5t#S256'?: unknown };

/**
 * Refresh that survives a lost answer (docs: the reuse leeway): the same
 * client presenting a refresh token it already rotated gets that rotation's
 * answer again, only while every token of that answer is still live and
 * unused and nothing ended the chain since. Anything else is theft.
 */
export function createLeeway(deps: { store: Store; keys: AdapterKeys; records: Records; states: RequestStates; options: StoreAdapterOptions }) {
  const { store, keys, records, states, options } = deps;
  const leewayMs = (options.refreshReuseLeeway ?? 60) * 1000;
  const publicClientLeeway = options.publicClientLeeway ?? false;

  /**
   * Whether this client may get a rotation's answer again at all: a
   * confidential client (it authenticated), or, when the host allows it, a
   * public client whose refresh token is bound to a DPoP key (the retry
   * proves that key). Certificate-bound tokens never (the certificate is the
   * provider's to check, on its own path).
   */
  function leewayClient(ctx: KoaContextWithOIDC, token: AdapterPayload | Bound): boolean {
    if (leewayMs <= 0 || token['x5t#S256']) return false;
    if (ctx.oidc.client?.clientAuthMethod === 'none') return publicClientLeeway && typeof token.jkt === 'string';
    return true;
  }

  /**
   * Where a kept answer stands now: `over` when its chain ended (its grant
   * revoked or ended by a mark, its session gone), `redo` when its new tokens
   * were recorded as never written (the answer never left: a retry may rotate
   * again), `live` when its refresh token is unused and its access token
   * still there, else `over` (a token of it was used or revoked).
   */
  async function answerStands(payload: AdapterPayload, answer: Record<string, unknown>, unwritten: boolean): Promise<'live' | 'redo' | 'over'> {
    const session = payload.expiresWithSession && payload.sessionUid ? keys.sessionUid(payload.sessionUid as string) : undefined;
    const [successor, access, grant, bound] = await Promise.all([
      store.hmget(keys.record('RefreshToken', answer.refresh_token as string), ['p', 'c']),
      typeof answer.access_token === 'string' ? store.hmget(keys.record('AccessToken', answer.access_token), ['p']) : [null],
      payload.grantId ? records.readMarked('Grant', keys.record('Grant', payload.grantId)) : undefined,
      session ? records.readMarked('Session', session) : undefined,
    ]);
    const chainLives = grant !== undefined && grant.clientId === payload.clientId
      && (!session || (bound?.accountId === payload.accountId
        && (bound?.authorizations as Record<string, { grantId?: string }> | undefined)?.[payload.clientId as string]?.grantId === payload.grantId));
    if (!chainLives) return 'over';
    if (unwritten) return 'redo';
    return successor[0] != null && successor[1] == null && access[0] != null ? 'live' : 'over';
  }

  function answeredAgain(ctx: object, payload: AdapterPayload): void {
    const consumed = typeof payload.consumed === 'number' ? payload.consumed : Math.floor(Date.now() / 1000);
    options.onAnswerAgain?.({
      clientId: payload.clientId as string,
      grantId: payload.grantId,
      ageSeconds: Math.max(0, Math.floor(Date.now() / 1000) - consumed),
    }, ctx);
  }

  return {
    leewayMs,

    /** Whether the rotation this request makes keeps its answer for the leeway. */
    keepsAnswer(ctx: object | undefined): boolean {
      const rotated = (ctx as TokenContext)?.oidc?.entities?.RotatedRefreshToken as Bound | undefined;
      return rotated !== undefined && leewayClient(ctx as KoaContextWithOIDC, rotated);
    },

    /**
     * A consumed refresh token presented again, with its kept answer: the
     * answer given again (undefined: the provider says invalid_grant and the
     * token endpoint step answers the kept answer), a rotation made again
     * (the payload without its consumed mark), or the payload as it is (the
     * provider sees a reuse and revokes the chain).
     */
    async withinLeeway(ctx: object | undefined, id: string, payload: AdapterPayload, sealed: string, unwritten: boolean): Promise<AdapterPayload | undefined> {
      const oidc = (ctx as TokenContext)?.oidc;
      if (!ctx || oidc?.route !== 'token' || oidc.client?.clientId !== payload.clientId) return payload;
      if (!leewayClient(ctx as KoaContextWithOIDC, payload)) return payload;
      if (typeof payload.jkt === 'string' && !(await proofMatches(ctx as KoaContextWithOIDC, payload.jkt))) return payload;
      const answer = open(sealed, id);
      if (typeof answer?.refresh_token !== 'string') return payload;
      const stands = await answerStands(payload, answer, unwritten);
      if (stands !== 'over' && options.accountLives && !(await options.accountLives(ctx, payload))) return payload;
      if (stands === 'live') {
        states.of(ctx).replay = answer;
        answeredAgain(ctx, payload);
        return undefined;
      }
      if (stands === 'redo') {
        // The first rotation's answer never left: whatever of it was written nobody holds.
        await store.del([keys.record('RefreshToken', answer.refresh_token), ...(typeof answer.access_token === 'string' ? [keys.record('AccessToken', answer.access_token)] : [])]);
        states.of(ctx).redoOf = id;
        const { consumed: _consumed, ...fresh } = payload;
        return fresh as AdapterPayload;
      }
      return payload;
    },
  };
}

export type Leeway = ReturnType<typeof createLeeway>;
