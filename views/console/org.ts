/**
 * The organization pages of the console: the members an admin sees, and the
 * confirmation before removing one. No script; the removal is a form POST
 * with the CSRF token, its confirmation a GET page of its own.
 */
import { t } from '../../src/i18n/index.ts';
import type { Locale } from '../../src/i18n/index.ts';
import { html } from '../../src/text/html.ts';
import type { SafeHtml } from '../../src/text/html.ts';
import { accountBar, bdi, breadcrumbs, buttonForm, httpsUrl, noticeBanner, path, timeTag, tx } from './parts.ts';
import { renderPage } from '../layout.ts';
import type { Page } from '../layout.ts';

export interface OrgMemberView {
  accountId: string;
  /** The member's email, when the host's contacts know it (untrusted text). */
  email: string | null;
  admin: boolean;
  status: 'member' | 'removed';
  removedAt?: number;
}

export interface OrgPageInput {
  locale: Locale;
  serviceName: string;
  csrf: string;
  org: { id: string; name: string };
  members: OrgMemberView[];
  notice?: 'removed' | undefined;
  /** Optional: shown in the header when known. */
  accountEmail?: string | undefined;
}

export interface RemoveMemberConfirmPageInput {
  locale: Locale;
  serviceName: string;
  csrf: string;
  org: { id: string; name: string };
  member: OrgMemberView;
  /** Optional: shown in the header when known. */
  accountEmail?: string | undefined;
}

/** The member as shown: the email, else the account id (as code). */
function memberName(member: OrgMemberView): SafeHtml {
  return member.email ? bdi(member.email) : html`<code>${member.accountId}</code>`;
}

function memberText(member: OrgMemberView): string {
  return member.email ?? member.accountId;
}

function memberRow(locale: Locale, orgId: string, member: OrgMemberView): SafeHtml {
  const removed = member.status === 'removed';
  const status = removed
    ? html`<span class="badge badge-danger">${t(locale, 'console.org.removed')}</span>${member.removedAt === undefined
      ? null
      : html` <span class="muted">${tx(locale, 'console.org.removed_on', { date: timeTag(locale, member.removedAt) })}</span>`}`
    : html`<span class="badge badge-ok">${t(locale, 'console.org.active')}</span>`;
  const action = !removed && !member.admin
    ? html`<a href="${path('/console/orgs/', orgId, '/members/', member.accountId, '/remove')}" class="btn danger-outline"><span>${tx(locale, 'console.org.remove', { member: html`<span class="visually-hidden">${memberName(member)}</span>` })}</span></a>`
    : null;
  return html`<tr${removed ? html` class="is-removed"` : null}>
<th scope="row">${memberName(member)}</th>
<td>${member.admin
    ? html`<span class="badge badge-accent">${t(locale, 'console.org.role_admin')}</span>`
    : html`<span class="badge badge-neutral">${t(locale, 'console.org.role_member')}</span>`}</td>
<td>${status}</td>
<td class="cell-action">${action}</td>
</tr>`;
}

export function orgPage(input: OrgPageInput): Page {
  const { locale, serviceName, org } = input;
  const orgName = bdi(org.name);
  const title = t(locale, 'console.org.title', { orgName: org.name });
  const current = input.members.filter((m) => m.status === 'member').length;
  const main = html`${breadcrumbs(locale, [
    { href: '/console', label: html`${t(locale, 'console.title')}` },
    { label: orgName },
  ])}
<div class="page-head">
<h1>${orgName}</h1>
<p class="lead">${tx(locale, 'console.org.lead', { orgName })}</p>
</div>
${noticeBanner(input.notice === 'removed' ? t(locale, 'console.org.notice.removed') : undefined)}
<section class="card">
<div class="section-head">
<h2 id="members-title">${t(locale, 'console.org.members')} <span class="pill">${current}</span></h2>
</div>
${input.members.length === 0
    ? html`<p class="empty">${t(locale, 'console.org.empty')}</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="members-title" tabindex="0">
<table class="table">
<thead><tr>
<th scope="col">${t(locale, 'console.org.member')}</th>
<th scope="col">${t(locale, 'console.org.role')}</th>
<th scope="col">${t(locale, 'console.org.status')}</th>
<th scope="col"><span class="visually-hidden">${t(locale, 'console.org.actions')}</span></th>
</tr></thead>
<tbody>
${input.members.map((m) => memberRow(locale, org.id, m))}
</tbody>
</table>
</div>`}
</section>
<p><a href="/console">${t(locale, 'console.org.back')}</a></p>
<p class="muted footnote">${t(locale, 'console.times_utc')}</p>`;
  return renderPage({ locale, title, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail) });
}

export function removeMemberConfirmPage(input: RemoveMemberConfirmPageInput): Page {
  const { locale, serviceName, org, member } = input;
  const orgName = bdi(org.name);
  const name = html`<strong>${memberName(member)}</strong>`;
  const title = t(locale, 'console.remove.title', { member: memberText(member), orgName: org.name });
  const main = html`<h1>${tx(locale, 'console.remove.title', { member: memberName(member), orgName })}</h1>
<p class="lead">${tx(locale, 'console.remove.intro', { member: name, orgName })}</p>
<ul class="consequences">
<li>${tx(locale, 'console.remove.access', { orgName })}</li>
<li>${tx(locale, 'console.remove.tokens', { orgName })}</li>
<li>${tx(locale, 'console.remove.signin', { orgName })}</li>
</ul>
<p class="muted">${tx(locale, 'console.remove.unaffected', { serviceName })}</p>
<div class="actions">
${buttonForm(path('/console/orgs/', org.id, '/members/', member.accountId, '/remove'), input.csrf, tx(locale, 'console.remove.submit', { member: memberName(member) }), 'danger')}
<a class="button secondary" href="${path('/console/orgs/', org.id)}">${t(locale, 'console.cancel')}</a>
</div>`;
  return renderPage({ locale, title, main, serviceName, headerAside: accountBar(locale, input.accountEmail) });
}

export interface OrgMembershipPageInput {
  locale: Locale;
  serviceName: string;
  org: { id: string; name: string };
  /** The organization's sites, as the person can use them (names untrusted). */
  sites: { name: string; uri: string | null }[];
  /** When the organization removed the person; their access to its sites has ended. */
  removedAt?: number | undefined;
  accountEmail?: string | undefined;
}

/**
 * The organization page as a member sees it: that they belong to it and
 * which sites it gives them, or that it removed their access (and when).
 * Members are not shown the other members.
 */
export function orgMembershipPage(input: OrgMembershipPageInput): Page {
  const { locale, serviceName, org } = input;
  const orgName = bdi(org.name);
  const title = org.name;
  const removed = input.removedAt !== undefined;
  const main = html`${breadcrumbs(locale, [
    { href: '/console', label: html`${t(locale, 'console.title')}` },
    { label: orgName },
  ])}
<div class="page-head">
<h1>${orgName}</h1>
<p class="lead">${removed
    ? tx(locale, 'console.org.member_removed', { orgName, date: timeTag(locale, input.removedAt!) })
    : tx(locale, 'console.org.member_lead', { orgName, serviceName })}</p>
</div>
${removed ? null : html`<section class="card" aria-labelledby="org-sites-title">
<div class="section-head"><h2 id="org-sites-title">${tx(locale, 'console.org.sites', { orgName })}</h2></div>
${input.sites.length === 0
    ? html`<p class="empty">${t(locale, 'console.org.no_sites')}</p>`
    : html`<ul class="links">${input.sites.map((site) => {
      const uri = httpsUrl(site.uri);
      return html`<li>${uri ? html`<a href="${uri.href}" rel="noopener noreferrer">${bdi(site.name)}</a>` : html`<span class="plain">${bdi(site.name)}</span>`}</li>`;
    })}</ul>`}
</section>`}
<p><a href="/console">${t(locale, 'console.org.back')}</a></p>`;
  return renderPage({ locale, title, main, serviceName, wide: true, headerAside: accountBar(locale, input.accountEmail) });
}
