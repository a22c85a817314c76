import type Provider from 'oidc-provider';

import type { ConsolePerson, ConsoleSection, SignoutNotify } from '../../src/index.ts';
import type { Accounts } from './accounts.ts';
import { assets } from './assets.ts';
import { consoleWays } from './console-ways.ts';
import type { IpLimits } from './ip-limits.ts';
import { createPasskeys } from './passkeys.ts';
import type { PasskeySupport, UpstreamSupport } from './sign-in-support.ts';
import { createUpstreams } from './upstream-clients.ts';
import { createUpstreamLinks, type Upstream } from './upstreams.ts';
import { relyingParty } from './webauthn.ts';

/**
 * The ways back in besides the emailed code (the spec's "a passkey or a
 * social provider"): passkeys where the issuer allows WebAuthn (README
 * "Passkeys"), and the upstreams CONFIG_FILE lists (docs/reference-provider.md "Social sign-in",
 * with their console sections and routes.
 */
export function signInWays(input: {
  issuer: string;
  serviceName: string;
  upstreams: Upstream[];
  plugin: SignoutNotify;
  accounts: Accounts;
  ipLimits: IpLimits;
  secret: string;
}) {
  const { plugin } = input;
  const rp = relyingParty(input.issuer, input.serviceName);
  if (!rp) plugin.logger.warn(`reference provider: passkeys are off for the issuer ${input.issuer}: WebAuthn needs https (or http on localhost) and a domain name, not an IP address`);
  const files = rp ? assets() : undefined;
  const passkeys: PasskeySupport | undefined = rp && files ? { store: createPasskeys(plugin.store), rp, script: files.passkeyScript } : undefined;
  const upstreams: UpstreamSupport | undefined = input.upstreams.length > 0
    ? { clients: createUpstreams(input.upstreams, input.issuer), links: createUpstreamLinks(plugin.store) }
    : undefined;
  upstreams?.clients.warmUp((upstream, err) => plugin.logger.warn('reference provider: upstream discovery failed (tried again at its next use)', { upstream: upstream.id, reason: err.message }));
  for (const upstream of input.upstreams) {
    plugin.logger.info(`reference provider: upstream "${upstream.id}" (${upstream.issuer}): register ${upstreams!.clients.redirectUri(upstream.id)} as its redirect URI`);
  }
  let routes: ReturnType<typeof consoleWays> | undefined;

  return {
    passkeys,
    upstreams,
    /** The console's sections (the plugin's `console.sections`); none until mounted. */
    sections: (person: ConsolePerson): Promise<ConsoleSection[]> | ConsoleSection[] => routes?.sections(person) ?? [],
    /** Mounts the script and the console's routes on the provider, ahead of the plugin's. */
    mount(provider: Provider): void {
      routes = consoleWays({
        provider, accounts: input.accounts, preferences: plugin.preferences, ipLimits: input.ipLimits, logger: plugin.logger,
        serviceName: input.serviceName, secret: input.secret, passkeys, upstreams,
        recentSignIn: plugin.recentSignIn, securityNotice: plugin.securityNotice, sharedSignals: plugin.sharedSignals,
        upstreamSignals: plugin.upstreamSignals,
      });
      if (files) provider.use(files.routes);
      provider.use(routes.routes.routes());
    },
  };
}

export type SignInWays = ReturnType<typeof signInWays>;
