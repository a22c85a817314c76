import { createHash } from 'node:crypto';
import { direction, t } from '../src/i18n/index.ts';
import type { Locale } from '../src/i18n/index.ts';
import { html, raw } from '../src/text/html.ts';
import type { SafeHtml } from '../src/text/html.ts';

export const PAGE_STYLE = `
:root{color-scheme:light dark;--bg:#f3f4f6;--card:#fff;--text:#111827;--muted:#4b5563;--line:#e5e7eb;--field:#6b7280;--accent:#1d4ed8;--accent-hover:#1e3a8a;--on-accent:#fff;--error:#b91c1c;--error-bg:#fef2f2;--focus:#1d4ed8;--code-bg:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#1a1d23;--text:#f3f4f6;--muted:#c0c6d0;--line:#2e333b;--field:#8b93a1;--accent:#93b4fd;--accent-hover:#bfd2fe;--on-accent:#0b1733;--error:#fca5a5;--error-bg:#3a1c1c;--focus:#93b4fd;--code-bg:#262a31}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;background:var(--bg);color:var(--text);font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue","Noto Sans",Arial,sans-serif}
.skip{position:absolute;left:1rem;top:-10rem;padding:.5rem 1rem;background:var(--card);color:var(--accent);border-radius:8px;z-index:1}
.skip:focus{top:1rem}
.site-header,.site-footer{width:100%;max-width:28rem;padding:2rem 1rem 1rem}
.site-header{font-weight:700;font-size:1.125rem;letter-spacing:-.01em}
.site-footer{padding-top:1.5rem;color:var(--muted);font-size:.875rem;text-align:center}
main{width:calc(100% - 2rem);max-width:28rem;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px;box-shadow:0 1px 2px rgb(0 0 0/.06),0 8px 24px rgb(0 0 0/.06)}
main:focus{outline:none}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;letter-spacing:-.015em;overflow-wrap:anywhere}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
p{margin:0 0 1rem}
strong{overflow-wrap:anywhere}
.lead,.muted{color:var(--muted)}
.muted{font-size:.875rem}
form{margin:0}
.field{margin:1.5rem 0 1.25rem}
label{display:block;font-weight:600;margin-bottom:.375rem}
.hint{color:var(--muted);font-size:.875rem;margin:-.125rem 0 .5rem}
input[type=email],input[type=text]{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--field);border-radius:8px}
input.otp{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1.5rem;letter-spacing:.4em;text-align:center}
input[aria-invalid=true]{border:2px solid var(--error)}
.error{margin:0 0 .5rem;padding:.5rem .75rem;color:var(--error);background:var(--error-bg);border-inline-start:4px solid var(--error);border-radius:4px;font-weight:600}
button{display:block;width:100%;min-height:2.75rem;padding:.625rem 1rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid transparent;cursor:pointer}
.primary{background:var(--accent);color:var(--on-accent)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:transparent;color:var(--text);border-color:var(--field)}
.secondary:hover{background:var(--bg)}
.link{display:inline;width:auto;min-height:0;padding:.25rem 0;background:none;border:0;color:var(--accent);font-weight:500;text-decoration:underline;text-underline-offset:2px}
.alt{margin-top:1rem;text-align:center}
a{color:var(--accent);text-underline-offset:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.list{margin:0 0 1rem;padding-inline-start:1.25rem}
.list li{margin:.25rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em;background:var(--code-bg);padding:.1em .35em;border-radius:4px;overflow-wrap:anywhere}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
.actions form{flex:1}
@media (max-width:30rem){.site-header{padding-top:1.25rem}main{width:100%;padding:1.5rem 1rem;border-radius:0;border-inline:0;box-shadow:none}.actions{flex-direction:column}}
@media (forced-colors:active){button{border:1px solid ButtonText}.error{border:1px solid CanvasText}}
`.trim();

export const PAGE_STYLE_HASH = createHash('sha256').update(PAGE_STYLE, 'utf8').digest('base64');

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

export function buildCsp(formAction: readonly string[] = [], scripts: readonly string[] = []): string {
  // Normalising to origins keeps caller input from smuggling extra directives into the header.
  const origins = new Set(formAction.map(httpOrigin).filter((o): o is string => o !== undefined));
  return [
    "default-src 'none'",
    ...(scripts.length ? [`script-src ${scripts.map(scriptHash).join(' ')}`] : []),
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
}): Page {
  const { locale, title, main, serviceName } = input;
  const scripts = input.scripts ?? [];
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
<body>
<a class="skip" href="#main">${t(locale, 'layout.skip')}</a>
<header class="site-header">${serviceName}</header>
<main id="main" tabindex="-1">
${main}
</main>
<footer class="site-footer"><p>${t(locale, 'layout.footer', { serviceName })}</p></footer>
${scripts.map((script) => html`<script>${raw(script)}</script>`)}
</body>
</html>
`;
  return { html: doc.toString(), csp: buildCsp(input.formAction, scripts) };
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
