import { createHash } from 'node:crypto';
import { direction, t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html, raw } from '../src/text/html.ts';
import type { SafeHtml } from '../src/text/html.ts';

import { PAGE_STYLE, PAGE_STYLE_HASH } from './page-style.ts';

export { PAGE_STYLE, PAGE_STYLE_HASH };

export type Page = { html: string; csp: string };

/** Returns the origin of an absolute http(s) URL; relative or other URLs are covered by 'self' or not allowed. */
function httpOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The CSP source for one inline script: its sha256, so nothing else runs. */
export function scriptHash(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

/**
 * The CSP source of a script file on the service's own origin: its exact URL
 * (CSP Level 3 host-source with a path), so no other file of the origin runs.
 */
function scriptFileSource(value: string): string | undefined {
  try {
    const url = new URL(value);
    const ok = (url.protocol === 'https:' || url.protocol === 'http:') && /^\/[\w./-]+\.js$/.test(url.pathname) && !url.search && !url.hash;
    return ok ? `${url.origin}${url.pathname}` : undefined;
  } catch {
    return undefined;
  }
}

export function buildCsp(formAction: readonly string[] = [], scripts: readonly string[] = [], scriptFiles: readonly string[] = []): string {
  // Normalising to origins keeps caller input from smuggling extra directives into the header.
  const origins = new Set(formAction.map(httpOrigin).filter((o): o is string => o !== undefined));
  const files = scriptFiles.map(scriptFileSource).filter((s): s is string => s !== undefined);
  const sources = [...files, ...scripts.map(scriptHash)];
  return [
    "default-src 'none'",
    ...(sources.length ? [`script-src ${sources.join(' ')}`] : []),
    // A script file talks to the service that served it (WebAuthn options), nowhere else.
    ...(files.length ? ["connect-src 'self'"] : []),
    `style-src 'sha256-${PAGE_STYLE_HASH}'`,
    "img-src 'self' data: https:",
    `form-action ${["'self'", ...origins].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function pageHeaders(csp: string): Record<string, string> {
  return {
    'Content-Security-Policy': csp,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  };
}

export function renderPage(input: {
  locale: Locale;
  title: string;
  main: SafeHtml;
  serviceName: string;
  formAction?: string[];
  /** Inline scripts, placed at the end of the body and allowed by hash. */
  scripts?: string[];
  /** Script files on the service's own origin (absolute URLs), loaded deferred and allowed by their exact URL. */
  scriptFiles?: string[];
  /**
   * The wide layout (the console): up to 64rem, and `main` is no card of its
   * own but holds several (`.card`). The other pages keep the narrow card.
   */
  wide?: boolean;
  /** Shown in the header after the service name, e.g. who is signed in and a sign-out link. */
  headerAside?: SafeHtml;
}): Page {
  const { locale, title, main, serviceName } = input;
  const scripts = input.scripts ?? [];
  const scriptFiles = input.scriptFiles ?? [];
  const doc = html`<!doctype html>
<html lang="${locale}" dir="${direction(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light dark">
<title>${title} — ${serviceName}</title>
<style>${raw(PAGE_STYLE)}</style>
</head>
<body${input.wide ? html` class="wide"` : null}>
<a class="skip" href="#main">${t(locale, 'layout.skip')}</a>
${input.headerAside
    ? html`<header class="site-header has-aside"><span class="brand">${serviceName}</span>${input.headerAside}</header>`
    : html`<header class="site-header">${serviceName}</header>`}
<main id="main" tabindex="-1">
${main}
</main>
<footer class="site-footer"><p>${t(locale, 'layout.footer', { serviceName })}</p></footer>
${scriptFiles.map((src) => html`<script src="${src}" defer></script>`)}
${scripts.map((script) => html`<script>${raw(script)}</script>`)}
</body>
</html>
`;
  return { html: doc.toString(), csp: buildCsp(input.formAction, scripts, scriptFiles) };
}

/* Pieces shared by the interaction pages. */

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** A form that is one button: one decision, its own CSRF token. */
export function decisionForm(action: string, csrf: string, label: string, style: 'primary' | 'secondary'): SafeHtml {
  return html`<form method="post" action="${action}">
${csrfField(csrf)}
<button type="submit" class="${style}">${label}</button>
</form>`;
}

export function errorMessage(id: string, message: string | undefined): SafeHtml {
  return message ? html`<p id="${id}" class="error" role="alert">${message}</p>` : html``;
}

/** Space-separated ids for aria-describedby, skipping absent ones. */
export function describedBy(...ids: (string | false | undefined)[]): SafeHtml {
  const list = ids.filter((id): id is string => typeof id === 'string' && id !== '');
  return list.length > 0 ? html` aria-describedby="${list.join(' ')}"` : html``;
}

/** Form action URLs, plus any absolute targets, so CSP form-action allows them. */
export function formTargets(extra: readonly string[] | undefined, ...actions: (string | undefined)[]): string[] {
  return [...(extra ?? []), ...actions.filter((a): a is string => typeof a === 'string')];
}
