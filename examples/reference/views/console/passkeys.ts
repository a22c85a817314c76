/**
 * The reference provider's Passkeys section of the console (a host section:
 * the plugin's `console.sections` option) and the confirmation of removing
 * one. Passkeys are added with the passkey script (WebAuthn needs it);
 * renaming and removing are plain forms. The account's last way in cannot
 * be removed: the page says so instead of offering it, and the service
 * refuses it anyway.
 */
import { accountBar, bdi, buttonForm, csrfField, html, noticeBanner, path, renderPage, t, timeTag, tx, type Locale, type MessageKey, type Page, type SafeHtml } from '../../../../src/pages.ts';

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt?: number | undefined;
  /** A synced passkey (multi-device, backed up). */
  synced: boolean;
}

export interface WaysInput {
  locale: Locale;
  /** The host's CSRF token for these forms. */
  csrf: string;
  /** The account's address, when it has one (codes are a way in too). */
  email?: string | undefined;
  /** How many ways in the account has: its address, passkeys and linked accounts. */
  ways: number;
  notice?: string | undefined;
}

/** The notices of the sign-in sections: a confirmation (status) or a refusal (alert). */
const NOTICES: Readonly<Record<string, { key: MessageKey; error?: true }>> = {
  passkey_added: { key: 'console.passkeys.notice.added' },
  passkey_renamed: { key: 'console.passkeys.notice.renamed' },
  passkey_removed: { key: 'console.passkeys.notice.removed' },
  passkey_last: { key: 'console.passkeys.notice.last', error: true },
  passkey_failed: { key: 'console.passkeys.notice.failed', error: true },
  upstream_linked: { key: 'console.upstreams.notice.linked' },
  upstream_unlinked: { key: 'console.upstreams.notice.unlinked' },
  upstream_last: { key: 'console.upstreams.notice.last', error: true },
  upstream_taken: { key: 'console.upstreams.notice.taken', error: true },
  upstream_exists: { key: 'console.upstreams.notice.exists', error: true },
  upstream_failed: { key: 'console.upstreams.notice.failed', error: true },
};

/** The notice of a section when the last action was one of its own (`prefix`): where the eyes go (#notice). */
export function waysNotice(locale: Locale, notice: string | undefined, prefix: string): SafeHtml | null {
  const entry = notice?.startsWith(prefix) && Object.hasOwn(NOTICES, notice) ? NOTICES[notice] : undefined;
  if (!entry) return null;
  if (!entry.error) return noticeBanner(t(locale, entry.key));
  return html`<p id="notice" class="notice notice-error" role="alert" tabindex="-1">${t(locale, entry.key)}</p>`;
}

function passkeyItem(input: WaysInput, passkey: PasskeyView, index: number): SafeHtml {
  const { locale, csrf } = input;
  const id = `passkey-${index}`;
  const base = path('/console/passkeys/', passkey.id);
  return html`<li class="tile">
<div class="item-head">
<div class="item-name"><h3 id="${id}">${bdi(passkey.name)}</h3></div>
${passkey.synced ? html`<span class="badge badge-accent">${t(locale, 'console.passkeys.synced')}</span>` : null}
</div>
<dl class="facts">
<div><dt>${t(locale, 'console.passkeys.created')}</dt><dd>${timeTag(locale, passkey.createdAt)}</dd></div>
<div><dt>${t(locale, 'console.passkeys.last_used')}</dt><dd>${passkey.lastUsedAt === undefined ? t(locale, 'console.passkeys.never_used') : timeTag(locale, passkey.lastUsedAt)}</dd></div>
</dl>
<form method="post" action="${base}/rename" class="inline-form">
${csrfField(csrf)}
<div class="select-field">
<label for="${id}-name">${t(locale, 'console.passkeys.rename_label')}<span class="visually-hidden"> — ${passkey.name}</span></label>
<input id="${id}-name" name="name" type="text" maxlength="64" required value="${passkey.name}">
</div>
<button type="submit" class="btn secondary" aria-describedby="${id}">${t(locale, 'console.passkeys.rename')}</button>
</form>
<div class="item-foot">
${input.ways > 1
    ? html`<a class="btn danger-outline" href="${base}/remove"><span>${tx(locale, 'console.passkeys.remove', { name: bdi(passkey.name) })}</span></a>`
    : html`<p class="blocked-on">${t(locale, 'console.passkeys.only_way')}</p>`}
</div>
</li>`;
}

/** The Passkeys section's content (the plugin adds the card and its heading). */
export function passkeysSection(input: WaysInput & { passkeys: PasskeyView[]; full: boolean }): string {
  const { locale, csrf } = input;
  return html`<p class="muted">${input.email
    ? tx(locale, 'console.passkeys.intro_email', { email: html`<strong>${bdi(input.email)}</strong>` })
    : t(locale, 'console.passkeys.intro_no_email')}</p>
${waysNotice(locale, input.notice, 'passkey_')}
${input.passkeys.length === 0
    ? html`<p class="empty">${t(locale, 'console.passkeys.empty')}</p>`
    : html`<ul class="tiles">
${input.passkeys.map((k, i) => passkeyItem(input, k, i))}
</ul>`}
${input.full
    ? html`<p class="muted">${t(locale, 'console.passkeys.full')}</p>`
    : html`<form id="passkey-add" method="post" action="/console/passkeys" class="inline-form add-form" data-passkey-create data-options="/console/passkeys/options" data-status="passkey-add-status" data-failed="${t(locale, 'passkey.error.create_cancelled')}" hidden data-passkey-hidden>
${csrfField(csrf)}
<input type="hidden" name="response" value="">
<div class="select-field">
<label for="passkey-name">${t(locale, 'console.passkeys.new_name')}</label>
<input id="passkey-name" name="name" type="text" maxlength="64" placeholder="${t(locale, 'console.passkeys.new_name_example')}">
</div>
<button type="submit" class="btn primary">${t(locale, 'console.passkeys.add')}</button>
</form>
<p id="passkey-add-status" class="error" role="alert" hidden></p>
<p class="muted" data-nojs>${t(locale, 'passkey.needs_javascript')}</p>`}`.toString();
}

/** "Remove <passkey>?": what removing it does; refused outright for the last way in. */
export function passkeyRemovePage(input: { locale: Locale; serviceName: string; csrf: string; accountLabel?: string | undefined; passkey: PasskeyView; last: boolean }): Page {
  const { locale, serviceName, passkey } = input;
  const name = bdi(passkey.name);
  const title = t(locale, 'console.passkeys.remove_title', { name: passkey.name });
  const main = html`<h1>${tx(locale, 'console.passkeys.remove_title', { name })}</h1>
${input.last
    ? html`<p class="error" role="alert">${t(locale, 'console.passkeys.notice.last')}</p>
<div class="actions"><a class="button secondary" href="/console#passkeys">${t(locale, 'console.org.back')}</a></div>`
    : html`<p class="lead">${tx(locale, 'console.passkeys.remove_intro', { name })}</p>
<p class="muted">${t(locale, 'console.passkeys.remove_device')}</p>
<div class="actions">
${buttonForm(path('/console/passkeys/', passkey.id, '/remove'), input.csrf, tx(locale, 'console.passkeys.remove_submit', { name }), 'danger')}
<a class="button secondary" href="/console#passkeys">${t(locale, 'console.cancel')}</a>
</div>`}`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountLabel) });
}
