/**
 * The ways back in besides the emailed code, as sign-in-ways.ts makes them
 * and the sign-in pages (interaction-kit.ts, passkey-routes.ts,
 * upstream-routes.ts) and the console (console-ways.ts) use them. Types
 * only, so that each of those may name them.
 */
import type { Passkeys } from './passkeys.ts';
import type { Upstreams } from './upstream-clients.ts';
import type { UpstreamLinks } from './upstreams.ts';
import type { RelyingParty } from './webauthn.ts';

/** Passkeys, where the issuer allows WebAuthn (webauthn.ts). */
export interface PasskeySupport {
  store: Passkeys;
  rp: RelyingParty;
  /** The passkey script's path on the service (assets.ts). */
  script: string;
}

/** Social sign-in: the upstreams CONFIG_FILE lists. */
export interface UpstreamSupport {
  clients: Upstreams;
  links: UpstreamLinks;
}
