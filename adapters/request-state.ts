import type { AdapterPayload } from 'oidc-provider';

import type { SiteUse } from './types.ts';

/** A write the token endpoint's batch collects (see batch.ts). */
export type Write =
  | { consume: true; model: string; id: string }
  | { consume: false; model: string; id: string; payload: AdapterPayload; expiresIn: number };

/** A write of the caller's own that leaves beside (or inside) the batch: the site's "last used". */
export interface Beside {
  write: () => void;
  use: SiteUse | undefined;
}

/**
 * What the adapter keeps for one request (oidc-provider's context) and no
 * longer: reads made ahead for the same request, what a reuse presented,
 * the leeway's answer, the token endpoint's collected writes.
 */
export interface RequestState {
  /** Session and grant reads made with the token's, handed to the request's next Session/Grant find, once. */
  reads?: Map<string, Promise<AdapterPayload | undefined>>;
  /** The code or refresh token this request presented when it had been consumed already. */
  consumed?: AdapterPayload;
  /** The answer to give again (reuse leeway). */
  replay?: object;
  /** The refresh token this request rotates again, its first rotation's tokens recorded as never written. */
  redoOf?: string;
  /** The token endpoint's writes, collected (batch()). */
  writes?: Write[];
  beside?: Beside[];
}

/** One state per request, gone with it (a WeakMap on the request's context). */
export class RequestStates {
  readonly #states = new WeakMap<object, RequestState>();

  of(ctx: object): RequestState {
    let state = this.#states.get(ctx);
    if (!state) this.#states.set(ctx, (state = {}));
    return state;
  }

  peek(ctx: object | undefined): RequestState | undefined {
    return ctx ? this.#states.get(ctx) : undefined;
  }
}
