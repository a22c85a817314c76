/**
 * The console's own client. The console signs people in through the provider like any site, as a
 * first-party public client of its own: the service session is what it
 * reads, so the code it receives is never redeemed. It is never listed as a
 * connected site and never asked for consent.
 */
export const CONSOLE_CLIENT_ID = 'oidc-signout-notify-console';

/** The console's callback path under the issuer. */
export const CONSOLE_CALLBACK = '/console/callback';
