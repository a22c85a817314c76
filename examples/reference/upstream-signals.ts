/**
 * Hearing the upstreams' security events (docs/upstream-signals.md): the
 * plugin's `upstreamSignals` option from CONFIG_FILE `upstreams[].signals`,
 * and the account linked to an upstream's subject.
 */
import type { LinkedAccount, SignoutNotifyOptions, UpstreamSubject } from '../../src/index.ts';
import { addressKey, type Accounts } from './accounts.ts';
import type { Upstream, UpstreamLinks } from './upstreams.ts';

type SignalUpstreams = NonNullable<NonNullable<SignoutNotifyOptions['upstreamSignals']>['upstreams']>;

/** The upstreams with `signals`, as the plugin takes them: the `aud` is our client id at the upstream unless given. */
export function signalUpstreams(upstreams: Upstream[]): SignalUpstreams {
  return upstreams.flatMap(({ id, name, issuer, client_id, client_secret, signals }) => (signals ? [{
    id, name, issuer: signals.issuer ?? issuer,
    audiences: signals.audiences ?? [client_id],
    ...(signals.jwksUri ? { jwksUri: signals.jwksUri } : { configurationUrl: signals.configurationUrl }),
    ...(signals.events ? { events: signals.events } : {}),
    ...(signals.allowUntypedSets ? { allowUntypedSets: true } : {}),
    ...(signals.poll ? { poll: { ...signals.poll, clientId: client_id, clientSecret: client_secret } } : {}),
    ...(signals.stream ? { stream: { tokenEndpoint: signals.stream.tokenEndpoint, clientId: client_id, clientSecret: client_secret } } : {}),
  }] : []));
}

/**
 * The account LINKED to the upstream's subject: by the upstream's `sub`;
 * by an address only where the link's own verified address is it (and it
 * is the account's address too: links are found by the account), never the
 * account of that address alone.
 */
export function linkedAccountLookup(links: UpstreamLinks, accounts: Accounts) {
  return async (upstreamId: string, subject: UpstreamSubject): Promise<LinkedAccount | undefined> => {
    if ('sub' in subject) {
      const accountId = await links.owner(upstreamId, subject.sub);
      return accountId ? { accountId, sub: subject.sub } : undefined;
    }
    const account = await accounts.findByEmail(subject.email);
    if (!account) return undefined;
    const link = (await links.list(account.accountId)).find((l) => l.upstream === upstreamId);
    if (!link?.verifiedEmail || addressKey(link.verifiedEmail) !== addressKey(subject.email)) return undefined;
    return { accountId: account.accountId, sub: link.sub };
  };
}
