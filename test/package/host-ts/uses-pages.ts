// A strict TypeScript host building its own pages, console section, letter
// and records with oidc-signout-notify/pages and oidc-signout-notify/store.
// Every `@ts-expect-error` below must be an error: were a type `any`, the
// line would compile, the directive would be unused, and tsc would fail.
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { ConsoleSection, SignoutNotify } from 'oidc-signout-notify';
import {
  automatedLetterHeaders, bdi, buttonForm, createCsrf, csrfField, html, htmlErrors, letterDocument, negotiateLocale, neutralizeLinks,
  PluginError, readForm, renderPage, sameOrigin, sendPage, signedInAccount, t, timeTag,
  type Csrf, type Locale, type Page, type RenderedLetter, type SafeHtml,
} from 'oidc-signout-notify/pages';
import { claim, lazyScript, pairsToObject, putTtl, rateLimit, type Script, type Store } from 'oidc-signout-notify/store';

const csrf: Csrf = createCsrf(() => 'host-key');

export function hostPage(locale: Locale, name: string): Page {
  const main: SafeHtml = html`<h1>${t(locale, 'login.title')}</h1><p>${bdi(name)}</p>${csrfField(csrf.token('page', name))}`;
  // @ts-expect-error the layout needs the service's name
  renderPage({ locale, title: 'x', main });
  // @ts-expect-error a sentence of the catalog, not any string
  t(locale, 'no.such.sentence');
  return renderPage({ locale, title: t(locale, 'login.title'), main, serviceName: 'Host' });
}

export async function hostRoute(provider: Provider, ctx: Context): Promise<void> {
  const locale: Locale = negotiateLocale({ acceptLanguage: ctx.get('accept-language') });
  const accountId: string | undefined = await signedInAccount(provider, ctx);
  if (!sameOrigin(ctx, provider.issuer)) throw new PluginError('cross_origin', 'not from our pages');
  // @ts-expect-error PluginError takes a name from the catalog
  const teapot = new PluginError('teapot', 'no such error');
  const status: number = teapot.statusCode;
  const form: Record<string, string> = await readForm(ctx, 4096);
  csrf.verify('page', accountId ?? '', form.csrf);
  sendPage(ctx, hostPage(locale, form.name ?? ''), status === 400 ? 400 : 200);
}

export const errorPages = htmlErrors('Host', () => 'https://id.example');

export function hostSection(locale: Locale, when: number): ConsoleSection {
  return { id: 'host', title: t(locale, 'console.passkeys.title'), html: html`${timeTag(locale, when)}${buttonForm('/console/host', 'token', 'Go', 'btn')}`.toString() };
}

export function hostLetter(locale: Locale, siteName: string): RenderedLetter {
  const site = neutralizeLinks(siteName, 'title');
  // @ts-expect-error a text is shown in a title or a body only
  neutralizeLinks(siteName, 'footer');
  const doc: string = letterDocument({ locale, title: site, maxWidth: 480, content: html`<p>${site}</p>` });
  return { subject: site, text: site, html: doc, headers: automatedLetterHeaders(locale) };
}

/** A host's own atomic step: its Lua file beside this module, its twin for the embedded store. */
const touch: () => Script = lazyScript('host_touch', (kv, [key], [at]) => {
  kv.hset(key!, { at: at! });
  return 1;
}, import.meta.url);

export async function hostRecords(plugin: SignoutNotify, email: string): Promise<Record<string, string>> {
  const store: Store = plugin.store;
  const owner = await store.run(claim(), [`${store.prefix}host-email:{${email}}`], ['account-1']);
  await store.run(putTtl(), [`${store.prefix}host-pending:{${email}}`], [60_000, 'owner', String(owner)]);
  const [allowed] = (await store.run(rateLimit(), [`${store.prefix}host-rate:{${email}}`], [5, 60_000])) as [number, number];
  await store.run(touch(), [`${store.prefix}host-pending:{${email}}`], [Date.now()]);
  // @ts-expect-error a script is run as the step's result, not the step itself
  await store.run(claim, [`${store.prefix}host-email:{${email}}`], ['account-2']);
  return { allowed: String(allowed), ...pairsToObject(['owner', String(owner)]) };
}
