import Provider from 'oidc-provider';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { CREDENTIALS } from '../../adapters/keys.ts';
import type { Move } from './move.ts';
import { NOT_READ_THROUGH } from './previous.ts';
import type { AdoptionWindow } from './window.ts';

type Lookup = 'find' | 'findByUid' | 'findByUserCode';

export interface ReadThroughDeps {
  window: AdoptionWindow;
  move: Move;
  /** One lookup in the previous store (counted). */
  lookup: (model: string, method: Lookup, value: string) => Promise<AdapterPayload | undefined | void>;
}

/**
 * Lookups of one value as several models in the same request (introspection
 * asks for an access token and a refresh token at once): when the plugin's own
 * store found it as one of them, the others do not look in the previous store.
 * A token's value is one random string: it is never two models' at once.
 */
class Siblings {
  readonly #byRequest = new WeakMap<object, Map<string, { model: string; found: Promise<AdapterPayload | undefined | void> }[]>>();

  note(ctx: object, id: string, model: string, found: Promise<AdapterPayload | undefined | void>): void {
    let values = this.#byRequest.get(ctx);
    if (!values) this.#byRequest.set(ctx, (values = new Map()));
    const list = values.get(id);
    if (list) list.push({ model, found });
    else values.set(id, [{ model, found }]);
  }

  async foundAsAnother(ctx: object, id: string, model: string): Promise<boolean> {
    const others = this.#byRequest.get(ctx)?.get(id)?.filter((s) => s.model !== model) ?? [];
    if (others.length === 0) return false;
    const found = await Promise.all(others.map((s) => s.found.catch(() => undefined)));
    return found.some(Boolean);
  }
}

/**
 * Each model's adapter, reading through to the previous store while the
 * window is open: a record the plugin's store does not hold (find, findByUid,
 * findByUserCode) is looked up there once, moved in (move.ts), and read again
 * from the plugin's store, so the request sees it as any native record (its
 * session and grant handed on, a consumed one reported as reuse). A native hit
 * costs nothing more; with the window closed a miss costs nothing more either.
 */
export function readThrough(inner: (model: string) => Adapter, deps: ReadThroughDeps): (model: string) => Adapter {
  const siblings = new Siblings();

  class ReadThroughAdapter implements Adapter {
    readonly model: string;
    readonly inner: Adapter;
    readonly #reads: boolean;

    constructor(model: string) {
      this.model = model;
      this.inner = inner(model);
      this.#reads = !NOT_READ_THROUGH.has(model);
    }

    upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      return this.inner.upsert(id, payload, expiresIn);
    }

    consume(id: string) {
      return this.inner.consume(id);
    }

    destroy(id: string) {
      return this.inner.destroy(id);
    }

    /** oidc-provider revokes a grant model by model: the previous store's records of it go too (a reused old refresh token's successor there). */
    revokeByGrantId(grantId: string) {
      const revoked = this.inner.revokeByGrantId(grantId);
      if (!deps.window.open) return revoked;
      return revoked.then(() => deps.move.revokePrevious(grantId));
    }

    find(id: string): Promise<AdapterPayload | undefined | void> {
      const native = this.inner.find(id);
      if (!this.#reads || !deps.window.open) return native;
      const ctx = CREDENTIALS.has(this.model) ? Provider.ctx : undefined;
      if (ctx) siblings.note(ctx, id, this.model, native);
      return native.then((record) => record ?? this.#through('find', id, ctx));
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined | void> {
      return this.#either('findByUid', uid);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined | void> {
      return this.#either('findByUserCode', userCode);
    }

    #either(method: 'findByUid' | 'findByUserCode', value: string): Promise<AdapterPayload | undefined | void> {
      const native = this.inner[method]!(value);
      if (!this.#reads || !deps.window.open) return native;
      return native.then((record) => record ?? this.#through(method, value, undefined));
    }

    async #through(method: Lookup, value: string, ctx: object | undefined): Promise<AdapterPayload | undefined | void> {
      if (ctx && await siblings.foundAsAnother(ctx, value, this.model)) return undefined;
      void deps.window.refresh();
      const raw = await deps.lookup(this.model, method, value);
      if (!raw) return undefined;
      const id = method === 'find' ? value : raw.jti;
      if (typeof id !== 'string') return undefined;
      await deps.move.move(this.model, id, raw);
      return this.inner[method]!(value);
    }
  }

  return (model) => new ReadThroughAdapter(model);
}
