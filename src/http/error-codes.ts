import type { MessageKey } from '../i18n/index.ts';

interface ErrorEntry {
  /** The `error` of `{ error, error_description }` (RFC 6749 section 5.2 where it has one). */
  code: string;
  status: number;
  /** The sentence a page shows for it, in the reader's language. */
  page: MessageKey;
  meaning: string;
  /** Raised by oidc-provider, not by the plugin; listed for the pages that show it. */
  provider?: true;
}

/**
 * Every error the plugin answers, by name, with its code, HTTP status, the
 * sentence a page shows and what it means. The JSON errors, the error pages
 * and the docs' table (docs/errors.md, checked against this by a test) come
 * from here. One code may stand under two names where two statuses were
 * chosen for it (a cross-origin form is `invalid_request` with 403).
 */
export const ERRORS = {
  invalid_request: { code: 'invalid_request', status: 400, page: 'error.code.invalid_request', meaning: 'The request is malformed: a missing or bad field (named in error_description), a body too large or incomplete, a wrong content type, a page of messages that no longer exists.' },
  form_expired: { code: 'invalid_request', status: 400, page: 'error.form_expired', meaning: 'A console form whose token is missing or out of date (the page is shown again to be reloaded).' },
  cross_origin: { code: 'invalid_request', status: 403, page: 'error.code.invalid_request', meaning: 'A console change from another origin, or with neither Origin nor Sec-Fetch-Site.' },
  invalid_client: { code: 'invalid_client', status: 401, page: 'error.code.invalid_client', meaning: 'Wrong client, wrong secret, or a public client (SPEC "Authentication"); with WWW-Authenticate.' },
  login_required: { code: 'login_required', status: 401, page: 'error.generic', meaning: 'A console route without the person\'s service session.' },
  recent_sign_in_required: { code: 'insufficient_user_authentication', status: 401, page: 'reauth.why.continue', meaning: 'What the request does adds a way into the account and needs a recent sign-in (console.recentSignInSeconds): the JSON answer\'s sign_in_again is the page that says why and leads to it; then the request is made again (RFC 9470\'s error code).' },
  not_admin: { code: 'access_denied', status: 403, page: 'error.code.access_denied', meaning: 'An organization\'s page for someone who is not one of its administrators.' },
  console_sign_in_failed: { code: 'access_denied', status: 400, page: 'error.callback_failed', meaning: 'Signing in to the console did not complete (the person cancelled, or the sign-in failed).' },
  not_connected: { code: 'not_connected', status: 403, page: 'error.generic', meaning: 'The person never signed in to this site, or its access was removed, blocked or ended (SPEC "Errors").' },
  not_found: { code: 'not_found', status: 404, page: 'error.not_found_body', meaning: 'No such page, site, session or message (any more).' },
  site_blocked: { code: 'site_blocked', status: 409, page: 'error.generic', meaning: 'The site is blocked: it has no access to remove; unblock it first.' },
  url_not_allowed: { code: 'url_not_allowed', status: 400, page: 'error.generic', meaning: 'The notification\'s url points somewhere other than the site\'s own host (SPEC "Errors").' },
  unknown_category: { code: 'unknown_category', status: 400, page: 'error.generic', meaning: 'The notification\'s category is not transactional, product or promotions (SPEC "Errors").' },
  rate_limited: { code: 'rate_limited', status: 429, page: 'error.generic', meaning: 'Too many requests in the window: notifications from the site or to the person, Shared Signals verifications or polls of the site, the person\'s data copies; Retry-After says when to try again.' },
  invalid_token: { code: 'invalid_token', status: 401, page: 'error.generic', meaning: 'A Shared Signals request without a valid access token of a confidential site (missing, unknown, expired); with WWW-Authenticate (RFC 6750).' },
  insufficient_scope: { code: 'insufficient_scope', status: 403, page: 'error.generic', meaning: 'A Shared Signals request whose access token lacks the scope it needs (ssf.manage to change, ssf.read or ssf.manage to read); with WWW-Authenticate (RFC 6750).' },
  client_not_allowed: { code: 'access_denied', status: 403, page: 'error.code.access_denied', meaning: 'A Global Token Revocation request of a client that upstreamSignals.globalTokenRevocation.clients does not list.' },
  user_not_found: { code: 'user_not_found', status: 404, page: 'error.not_found_body', meaning: 'A Global Token Revocation request naming a subject of no account here (the draft\'s "404 User Not Found").' },
  stream_exists: { code: 'stream_exists', status: 409, page: 'error.generic', meaning: 'The site has a Shared Signals stream already (one per site): read, change or delete it.' },
  server_error: { code: 'server_error', status: 500, page: 'error.code.server_error', meaning: 'Something failed that the request could not cause; logged, without internals in the answer.' },
  temporarily_unavailable: { code: 'temporarily_unavailable', status: 503, page: 'error.code.server_error', meaning: 'Redis cannot be reached right now; Retry-After says when to try again.' },
  invalid_redirect_uri: { code: 'invalid_redirect_uri', status: 400, page: 'error.code.invalid_redirect_uri', meaning: 'The redirect address is not one the site registered.', provider: true },
  unauthorized_client: { code: 'unauthorized_client', status: 400, page: 'error.code.invalid_client', meaning: 'The site may not use this flow.', provider: true },
  unsupported_response_type: { code: 'unsupported_response_type', status: 400, page: 'error.code.invalid_request', meaning: 'A response type the service does not offer (the code flow only).', provider: true },
  unsupported_response_mode: { code: 'unsupported_response_mode', status: 400, page: 'error.code.invalid_request', meaning: 'A response mode the service does not offer (query or form_post).', provider: true },
  invalid_scope: { code: 'invalid_scope', status: 400, page: 'error.code.invalid_request', meaning: 'A scope the site may not ask for.', provider: true },
  access_denied: { code: 'access_denied', status: 400, page: 'error.code.access_denied', meaning: 'The person said no, or may not use the site (an organization\'s site, a blocked site with prompt=none).', provider: true },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;

/** The sentence a page shows for an error code: the first entry's with that code. */
export const PAGE_SENTENCE: ReadonlyMap<string, MessageKey> = new Map(
  Object.values(ERRORS as Record<string, ErrorEntry>).reverse().map((e) => [e.code, e.page]),
);
