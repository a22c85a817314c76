import { decisionForm, fillHtml, formTargets, html, renderPage, t, type Locale, type MessageKey, type Page, type SafeHtml } from '../../../../src/pages.ts';

export type ConsentPageInput = {
  locale: Locale;
  serviceName: string;
  clientName: string;
  clientUri?: string;
  action: string;
  abortAction: string;
  csrf: string;
  scopes: string[];
  claims?: string[];
  offlineAccess: boolean;
  accountEmail?: string;
  /** Extra origins a submission may redirect to (CSP form-action), e.g. the client's redirect_uri. */
  formAction?: string[];
};

const SCOPE_KEYS: Readonly<Record<string, MessageKey>> = {
  openid: 'consent.scope.openid',
  profile: 'consent.scope.profile',
  email: 'consent.scope.email',
  offline_access: 'consent.scope.offline_access',
};

function scopeItem(locale: Locale, scope: string): SafeHtml {
  const key = Object.hasOwn(SCOPE_KEYS, scope) ? SCOPE_KEYS[scope] : undefined;
  return key ? html`<li>${t(locale, key)}</li>` : html`<li><code>${scope}</code></li>`;
}

function requestedScopes(scopes: readonly string[], offlineAccess: boolean): string[] {
  const list = new Set(scopes.filter((s) => s !== 'offline_access'));
  // Shown when either source says so: overstating what a client gets is safer than hiding it.
  if (offlineAccess || scopes.includes('offline_access')) list.add('offline_access');
  return [...list];
}

function clientLink(locale: Locale, clientUri: string | undefined): SafeHtml | null {
  if (!clientUri) return null;
  let url: URL;
  try {
    url = new URL(clientUri);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  return html`<p class="muted"><a href="${url.href}" target="_blank" rel="noopener noreferrer">${t(locale, 'consent.client_site', { host: url.host })}</a></p>`;
}


export function consentPage(input: ConsentPageInput): Page {
  const { locale, clientName, accountEmail } = input;
  const title = t(locale, 'consent.title', { clientName });
  const claims = [...new Set(input.claims ?? [])];
  const main = html`<h1>${title}</h1>
${accountEmail ? html`<p class="lead">${fillHtml(t(locale, 'consent.signed_in_as'), { email: html`<strong>${accountEmail}</strong>` })}</p>` : null}
${clientLink(locale, input.clientUri)}
<h2>${t(locale, 'consent.asks', { clientName })}</h2>
<ul class="list">
${requestedScopes(input.scopes, input.offlineAccess).map((s) => scopeItem(locale, s))}
</ul>
${claims.length > 0 ? html`<h2>${t(locale, 'consent.claims')}</h2>
<ul class="list">
${claims.map((c) => html`<li><code>${c}</code></li>`)}
</ul>` : null}
<p class="muted">${t(locale, 'consent.trust', { clientName })}</p>
<div class="actions">
${decisionForm(input.action, input.csrf, t(locale, 'consent.allow'), 'primary')}
${decisionForm(input.abortAction, input.csrf, t(locale, 'consent.deny'), 'secondary')}
</div>`;
  return renderPage({
    locale,
    title,
    main,
    serviceName: input.serviceName,
    formAction: formTargets(input.formAction, input.action, input.abortAction),
  });
}
