import type { ReplayEvent } from '../../adapters/store-adapter.ts';
import { REPLAY_EVENT, type EmitEvent } from '../events.ts';
import type { Logger } from '../host.ts';
import type { TheftNotice } from './notice.ts';

/**
 * Theft of a refresh token or a code (RFC 9700 section 4.14.2), in one
 * place: whoever finds it (the adapter's consume that lost a race, or
 * oidc-provider's own reuse path through watch-reuse.ts) reports it here;
 * it is logged (no token values), emitted as `signout_notify.replay_detected`,
 * and the person is told while the site's access ends (notice.ts). The token
 * endpoint waits for the notice's durable part before its answer leaves.
 */
export function createTheft(deps: { logger: Logger; emit: EmitEvent; notice: TheftNotice }) {
  const { logger, emit } = deps;
  const noticing = new WeakMap<object, Promise<void>>();

  return {
    /** A reuse was found (the grant is revoked by then). `ctx` is the token request's, when known. */
    report(event: ReplayEvent, ctx?: object): void {
      logger.warn(`${event.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} reuse detected: grant revoked`, { ...event });
      emit(REPLAY_EVENT, event);
      const work = deps.notice(event).catch((err: Error) => logger.error('theft notice failed', { clientId: event.clientId, reason: err.message }));
      if (ctx) noticing.set(ctx, work);
    },

    /** The notice a report started for this request, to wait for before its answer leaves. */
    pending: (ctx: object): Promise<void> | undefined => noticing.get(ctx),
  };
}

export type Theft = ReturnType<typeof createTheft>;
