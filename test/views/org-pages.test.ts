/** An organization's members page and the confirmation before removing a member. */
import { expect } from 'chai';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { orgPage, removeMemberConfirmPage } from '../../views/console/org.ts';
import type { OrgMemberView } from '../../views/console/org.ts';
import { expectConsolePage } from '../helpers/console-views.ts';
import { ESCAPED_BREAKOUT, ESCAPED_SCRIPT, forms, HOSTILE, links, SCRIPT, tags, text } from '../helpers/html.ts';

const MEMBERS: OrgMemberView[] = [
  { accountId: 'a1', email: 'ann@example.com', admin: true, status: 'member' },
  { accountId: 'a2', email: 'bob@example.com', admin: false, status: 'member' },
  { accountId: 'a/3', email: null, admin: false, status: 'member' },
  { accountId: 'a4', email: 'carol@example.com', admin: false, status: 'removed', removedAt: Date.UTC(2026, 1, 11, 13, 0) },
];
const ORG = { id: 'acme', name: 'Acme Corp' };

function rows(source: string): string[] {
  return [...(source.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '').matchAll(/<tr\b[\s\S]*?<\/tr>/g)].map((m) => m[0]);
}

describe('orgPage', () => {
  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = orgPage({ locale, serviceName: 'Example ID', csrf: 'tok', org: ORG, members: MEMBERS, notice: 'removed' });
      expectConsolePage(page, locale);
      expect(page.html).to.include('<h1><bdi>Acme Corp</bdi></h1>');
      expect(page.html).to.include(`<title>${t(locale, 'console.org.title', { orgName: 'Acme Corp' })} — Example ID</title>`);
      expect(page.html).to.include(`<p id="notice" class="notice" role="status" tabindex="-1">${t(locale, 'console.org.notice.removed')}</p>`);
      expect(rows(page.html)).to.have.length(4);
      for (const key of ['console.org.member', 'console.org.role', 'console.org.status'] as const) {
        expect(page.html).to.include(`<th scope="col">${t(locale, key)}</th>`);
      }
    });
  }

  it('lists members with role and status, and a remove link for current non-admin members only', () => {
    const page = orgPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', org: ORG, members: MEMBERS }).html;
    const [ann, bob, anon, carol] = rows(page);
    expect(ann).to.include('<th scope="row"><bdi>ann@example.com</bdi></th>');
    expect(ann).to.include('Administrator');
    expect(ann).to.include('Active');
    expect(links(ann ?? '')).to.have.length(0);
    expect(bob).to.include('<span class="badge badge-neutral">Member</span>');
    expect(links(bob ?? '').map((l) => [l.attrs.href, text(l.text)])).to.deep.equal([
      ['/console/orgs/acme/members/a2/remove', 'Remove bob@example.com'],
    ]);
    expect(anon).to.include('<th scope="row"><code>a/3</code></th>');
    expect(links(anon ?? '').map((l) => l.attrs.href)).to.deep.equal(['/console/orgs/acme/members/a%2F3/remove']);
    expect(carol).to.include('Removed');
    expect(carol).to.include('on <time datetime="2026-02-11T13:00:00.000Z">Feb 11, 2026, 1:00 PM</time>');
    expect(links(carol ?? '')).to.have.length(0);
    expect(forms(page)).to.have.length(0);
    expect(page).to.not.include('role="status"');
    expect(page).to.include('<a href="/console">Back to your console</a>');
    expect(page).to.include('<li><span aria-current="page"><bdi>Acme Corp</bdi></span></li>');
    expect(page).to.include('<li><a href="/console">Your console</a></li>');
  });

  it('has an empty state', () => {
    const page = orgPage({ locale: 'en', serviceName: 'S', csrf: 'tok', org: ORG, members: [] }).html;
    expect(page).to.include('<p class="empty">This organization has no members.</p>');
    expect(page).to.not.include('<table');
  });

  it('escapes hostile org names, emails and ids', () => {
    const page = orgPage({
      locale: 'en', serviceName: HOSTILE, csrf: HOSTILE, accountEmail: HOSTILE,
      org: { id: HOSTILE, name: HOSTILE },
      members: [{ accountId: HOSTILE, email: HOSTILE, admin: false, status: 'member' }, { accountId: HOSTILE, email: null, admin: false, status: 'member' }],
    });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.not.include('<img');
    expect(page.html).to.include(`<h1><bdi>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</bdi></h1>`);
    const enc = encodeURIComponent(HOSTILE);
    expect(tags(page.html, 'a').map((a) => a.attrs.href)).to.include(`/console/orgs/${enc}/members/${enc}/remove`);
  });
});

describe('removeMemberConfirmPage', () => {
  const member = MEMBERS[1] as OrgMemberView;

  for (const locale of LOCALES) {
    it(`renders in ${locale}`, () => {
      const page = removeMemberConfirmPage({ locale, serviceName: 'Example ID', csrf: 'tok', org: ORG, member });
      expectConsolePage(page, locale);
      expect(page.html).to.include(`<title>${t(locale, 'console.remove.title', { member: 'bob@example.com', orgName: 'Acme Corp' })} — Example ID</title>`);
      for (const key of ['console.remove.access', 'console.remove.tokens', 'console.remove.signin'] as const) {
        expect(page.html).to.include(`<li>${t(locale, key).replace('{orgName}', '<bdi>Acme Corp</bdi>')}</li>`);
      }
    });
  }

  it('explains the consequences, with one danger form and a Cancel link', () => {
    const page = removeMemberConfirmPage({ locale: 'en', serviceName: 'Example ID', csrf: 'tok', org: { id: 'a/b', name: 'Acme Corp' }, member: { ...member, accountId: 'x y' } });
    expect(text(page.html)).to.include(
      'They lose access to the sites of Acme Corp at once: their sessions at those sites end. ' +
      'Their refresh tokens for the sites of Acme Corp stop working. They cannot sign in to the sites of Acme Corp again.',
    );
    expect(forms(page.html).map((f) => [f.attrs.action, f.buttons.map((b) => [b.attrs.class, text(b.text)])])).to.deep.equal([
      ['/console/orgs/a%2Fb/members/x%20y/remove', [['danger', 'Remove bob@example.com']]],
    ]);
    expect(links(page.html).find((l) => l.text === 'Cancel')?.attrs).to.deep.equal({ class: 'button secondary', href: '/console/orgs/a%2Fb' });
  });

  it('names a member without email by account id, escaped', () => {
    const page = removeMemberConfirmPage({ locale: 'en', serviceName: 'S', csrf: 'tok', org: ORG, member: { accountId: HOSTILE, email: null, admin: false, status: 'member' } });
    expect(page.html).to.not.include(SCRIPT);
    expect(page.html).to.include(`<h1>Remove <code>${ESCAPED_SCRIPT}${ESCAPED_BREAKOUT}</code> from <bdi>Acme Corp</bdi>?</h1>`);
  });
});
