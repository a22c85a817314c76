import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Logger } from '../host.ts';
import { CONSOLE_CLIENT_ID } from '../console-client.ts';
import type { SessionExpiry } from '../sessions/expiry.ts';
import type { TellSites } from '../tell/tell.ts';
import { beforeTheAnswer } from './backchannel.ts';

/**
 * A service sign-out at /session/end tells the sites it signed out of
 * (src/tell/; CAEP session-revoked, initiated by the person): every site of
 * the session on "Sign out", the asking site alone on "Stay signed in". It
 * listens to oidc-provider's own event, after the session was ended; the
 * logout tokens oidc-provider sent itself through the logout queue
 * (backchannel.ts), so only the Shared Signals event is queued here, under
 * the session's cause (`end:<uid>`, and the site on "Stay signed in"). What it told is forgotten for the session's
 * expiry.
 */
export function sessionEndSignals(provider: Provider, tell: TellSites, logger: Logger, expiry?: SessionExpiry): void {
  provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
    const { session, params, client } = ctx.oidc;
    const accountId = session?.accountId;
    if (!accountId) return;
    // Told now: the session's (or the site's) expiry tells nobody again (src/sessions/expiry.ts).
    const uid = (session as { uid?: string }).uid;
    const forgotten = params?.logout ? { uid } : client ? { uid, clientId: client.clientId } : undefined;
    if (uid && forgotten) {
      expiry?.forget(accountId, forgotten)
        .catch((err: Error) => logger.warn('signed-out session not forgotten for its expiry', { reason: err.message }));
    }
    const clientIds = params?.logout
      ? Object.keys(session.authorizations ?? {}).filter((id) => id !== CONSOLE_CLIENT_ID)
      : client ? [client.clientId] : [];
    if (!uid || clientIds.length === 0) return;
    beforeTheAnswer(tell({
      // "Stay signed in" ends one site of a session that lives on (a later "Sign out" there is another cause).
      accountId, cause: params?.logout ? `end:${uid}` : `end:${uid}:${clientIds[0]}`, reason: 'sign_out', initiator: 'user',
      sites: clientIds.map((clientId) => ({ clientId, sids: [], logout: false })),
    }).catch((err: Error) => logger.error('security event not queued', { reason: err.message })));
  });
}
