import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';

import { discardBody, readAnyForm } from '../http/body.ts';
import { sendPage } from '../http/page.ts';
import { htmlErrors } from '../http/error-page.ts';
import { negotiateLocale } from '../i18n/index.ts';
import type { ContactLookup } from '../host.ts';
import { unsubscribePage, type UnsubscribeState } from '../../views/unsubscribe.ts';
import type { Senders } from '../notify/senders.ts';
import type { UnsubscribeTokens } from '../notify/unsubscribe-token.ts';

export interface UnsubscribeDeps {
  provider: Provider;
  senders: Senders;
  tokens: UnsubscribeTokens;
  contacts: ContactLookup;
  serviceName: string;
}

const ACTIONS = { email_off: 'email_off', category_off: 'category_off', mute: 'muted' } as const;

/**
 * The letters' unsubscribe link, `/unsubscribe/<token>` (RFC 8058). A GET only
 * shows what would happen: mail scanners follow links, and a GET must change
 * nothing. A POST (the mail client's one-click `List-Unsubscribe=One-Click`,
 * or the page's button) stops email for that category from that site; the
 * messages keep arriving in the account. Idempotent, answers 200, no sign-in:
 * the signed token is the proof (it also makes a CSRF token pointless).
 */
export function unsubscribeRoutes(deps: UnsubscribeDeps): Router {
  const router = new Router({ prefix: '/unsubscribe/:token' });
  router.use(htmlErrors(deps.serviceName, () => deps.provider.issuer));

  async function render(ctx: Context, state: UnsubscribeState, status = 200) {
    const claim = deps.tokens.verify(ctx.params.token!);
    const contact = claim ? await deps.contacts(claim.accountId) : undefined;
    const client = claim ? await deps.provider.Client.find(claim.clientId).catch(() => undefined) : undefined;
    const base = deps.provider.issuer.replace(/\/$/, '');
    sendPage(ctx, unsubscribePage({
      locale: negotiateLocale({ preferred: contact?.locale, acceptLanguage: ctx.get('accept-language') }),
      serviceName: deps.serviceName,
      siteName: client?.clientName ?? claim?.clientId ?? '',
      category: claim?.category ?? 'transactional',
      action: `${base}/unsubscribe/${encodeURIComponent(ctx.params.token!)}`,
      consoleUrl: `${base}/console`,
      state,
    }), status);
  }

  router.get('/', async (ctx) => {
    const valid = deps.tokens.verify(ctx.params.token!) !== undefined;
    await render(ctx, valid ? { kind: 'confirm' } : { kind: 'invalid' }, valid ? 200 : 400);
  });

  router.post('/', async (ctx) => {
    const claim = deps.tokens.verify(ctx.params.token!);
    if (!claim) {
      await discardBody(ctx);
      await render(ctx, { kind: 'invalid' }, 400);
      return;
    }
    // Receivers send one-click (RFC 8058) urlencoded or multipart; a body of
    // any other kind, or one that does not parse, still turns the category's
    // email off (the signed link is the proof; refusing would keep the
    // letters coming). Only the page's own buttons ask for more.
    let form: Record<string, string> = {};
    if (ctx.is('multipart/form-data', 'application/x-www-form-urlencoded')) form = await readAnyForm(ctx).catch(() => ({}));
    await discardBody(ctx);
    // One-click carries List-Unsubscribe=One-Click; the page says what it wants.
    const action = form.do === 'category_off' || form.do === 'mute' ? form.do : 'email_off';
    await deps.senders.update(claim.accountId, claim.clientId, action === 'mute'
      ? { muted: true }
      : { categories: { [claim.category]: action === 'category_off' ? 'off' : 'email_off' } });
    await render(ctx, { kind: 'done', did: ACTIONS[action] });
  });

  return router;
}
