/**
 * The demo site's HTML. Every value that comes from outside (claims, error
 * codes) goes through `escapeHtml`; the only style is one inline block allowed
 * by its hash in the Content-Security-Policy, and there is no script at all.
 */
import { createHash } from 'node:crypto';

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}'
  + 'form{display:inline-block;margin:0 .5rem .5rem 0}button,a.button{font:inherit;padding:.4rem .8rem}'
  + '.notice{background:#eef6ee;border:1px solid #9c9;padding:.5rem 1rem}.error{background:#fbeeee;border-color:#c99}'
  + 'small{color:#555}';

/** `'sha256-...'` for the CSP's style-src. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Demo site</h1>
${body}
</body>
</html>
`;
}

/** A POST form with the session's CSRF token and one button. */
function button(action: string, csrf: string, label: string): string {
  return `<form method="post" action="${escapeHtml(action)}">`
    + `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`
    + `<button type="submit">${escapeHtml(label)}</button></form>`;
}

export interface HomeInput {
  /** Undefined when nobody is signed in here. */
  signedIn?: {
    /** The ID token's email claim, else its sub. */
    name: string;
    csrf: string;
    hasRefreshToken: boolean;
    offlineAccess: boolean;
    accessTokenExpiresAt?: Date;
  };
  notice?: string;
}

export function homePage({ signedIn, notice }: HomeInput): string {
  const top = notice ? `<p class="notice">${escapeHtml(notice)}</p>\n` : '';
  if (!signedIn) {
    return layout('Demo site', `${top}<p>You are not signed in.</p>
<p><a class="button" href="/login">Sign in</a>
<a class="button" href="/login?offline_access=1">Sign in with offline access</a></p>
<p><small>Offline access lets this site keep refreshing its tokens after you sign out of the sign-in service; the service asks for your consent.</small></p>`);
  }
  const { name, csrf, hasRefreshToken, offlineAccess, accessTokenExpiresAt } = signedIn;
  const details = [
    accessTokenExpiresAt ? `Access token valid until ${accessTokenExpiresAt.toISOString()}.` : '',
    hasRefreshToken ? `Refresh token held${offlineAccess ? ' (offline access)' : ' (ends with your sign-in service session)'}.` : 'No refresh token.',
  ].filter(Boolean).join(' ');
  return layout('Demo site', `${top}<p>Signed in as <strong>${escapeHtml(name)}</strong>.</p>
<p><small>${escapeHtml(details)}</small></p>
${button('/logout', csrf, 'Sign out of this site')}
${button('/logout/everywhere', csrf, 'Sign out everywhere')}
${button('/refresh', csrf, 'Refresh tokens')}
<p><small><em>Sign out of this site</em> forgets you here only: the sign-in service still knows you, so signing in again goes straight through.
<em>Sign out everywhere</em> also ends your session at the sign-in service.</small></p>`);
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<p class="notice error">${escapeHtml(message)}</p>
<p><a href="/">Home</a> &middot; <a href="/login">Sign in</a></p>`);
}
