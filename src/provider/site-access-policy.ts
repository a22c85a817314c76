import { errors, interactionPolicy } from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import type { Organizations } from '../orgs/organizations.ts';
import type { ConnectedSites } from '../sites/connected-sites.ts';

const { Check, Prompt, base } = interactionPolicy;

/** Name of the prompt the plugin adds; its page is the plugin's own (blocked-site). */
export const SITE_ACCESS_PROMPT = 'site_access';

type Policy = NonNullable<NonNullable<Configuration['interactions']>['policy']>;
type InteractionUrl = NonNullable<NonNullable<Configuration['interactions']>['url']>;

/**
 * Adds, right after the host's `login` prompt (so the account is known), the
 * checks that keep a site from getting tokens it lost:
 * - `organization_membership`: a site of an organization signs in its current
 *   members only; anyone else is answered `access_denied` with a description,
 *   with no page to click through;
 * - `site_blocked`: the person blocked the site; the plugin's page offers
 *   "Unblock and continue" and "Cancel" (Cancel: `access_denied`). With
 *   `prompt=none` it is `access_denied` at once.
 * The host's own prompts (consent, select_account, ...) keep their order.
 */
export function siteAccessPolicy(host: Policy | undefined, deps: { sites: ConnectedSites; orgs: Organizations }): Policy {
  // A copy: the host's array stays as the host built it.
  const policy = [...(host ?? base())];
  if (policy.some((p) => p.name === SITE_ACCESS_PROMPT)) return policy;

  const prompt = new Prompt(
    { name: SITE_ACCESS_PROMPT, requestable: false },
    new Check('organization_membership', 'the account is not a member of the organization that owns this site', 'access_denied', async (ctx: KoaContextWithOIDC) => {
      const { accountId, clientId } = who(ctx);
      if (!accountId || !clientId) return Check.NO_NEED_TO_PROMPT;
      if (await deps.orgs.mayUse(accountId, clientId)) return Check.NO_NEED_TO_PROMPT;
      // No page can fix this: answer the site straight away.
      throw new errors.AccessDenied('the account is not a member of the organization that owns this site');
    }),
    new Check('site_blocked', 'the person blocked this site', 'access_denied', async (ctx: KoaContextWithOIDC) => {
      const { accountId, clientId } = who(ctx);
      if (!accountId || !clientId) return Check.NO_NEED_TO_PROMPT;
      const site = await deps.sites.get(accountId, clientId);
      return site?.status === 'blocked' ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
  const login = policy.findIndex((p) => p.name === 'login');
  policy.splice(login + 1, 0, prompt);
  return policy;
}

function who(ctx: KoaContextWithOIDC): { accountId?: string | undefined; clientId?: string | undefined } {
  return { accountId: ctx.oidc.session?.accountId, clientId: ctx.oidc.client?.clientId };
}

/** Path of the blocked-site page for an interaction, under the issuer's path. */
export function blockedSitePath(issuer: string, uid: string): string {
  return `${new URL(issuer).pathname.replace(/\/$/, '')}/console/blocked-site/${encodeURIComponent(uid)}`;
}

/** interactions.url: the plugin's prompt goes to its page, every other to the host's. */
export function interactionUrl(host: InteractionUrl | undefined): InteractionUrl {
  return async (ctx, interaction) => {
    if (interaction.prompt.name === SITE_ACCESS_PROMPT) return blockedSitePath(ctx.oidc.issuer, interaction.uid);
    return host ? host(ctx, interaction) : `/interaction/${interaction.uid}`;
  };
}
