import type { SignoutNotify } from '../signout-notify.ts';
import { EXIT, UsageError } from './args.ts';
import type { HostModule } from './host-module.ts';
import { n, type Output } from './output.ts';

/** What the plugin holds of a person: what an operator checks before ending or deleting (a typo names nobody, or someone else). */
async function holds(plugin: SignoutNotify, accountId: string) {
  const [sites, sessions, adoption] = await Promise.all([plugin.connectedSites(accountId), plugin.sessions.list(accountId), plugin.adoption?.status()]);
  return { sites: sites.length, sessions: sessions.length, adoptionWindowOpen: adoption?.open ?? false };
}

const holdsText = (accountId: string, held: Awaited<ReturnType<typeof holds>>) =>
  `the plugin holds ${held.sites === 0 && held.sessions === 0 ? 'nothing' : `${n(held.sites)} connected site${held.sites === 1 ? '' : 's'} and ${n(held.sessions)} service session${held.sessions === 1 ? '' : 's'}`} of "${accountId}"${held.adoptionWindowOpen ? ' (and the previous store may hold more: the adoption window is open)' : ''}`;

/** `end-site-access <clientId>`: plugin.endSiteAccess, for a site the provider knows, with --yes. */
export async function endSiteAccessCommand(host: HostModule, clientId: string, yes: boolean, out: Output): Promise<number> {
  if (!host.provider) throw new UsageError(`${host.path} exports no \`provider\`: end-site-access checks the client id against it (export it, as README's provider.js does)`);
  const client = await host.provider.Client.find(clientId).catch(() => undefined);
  if (!client) {
    out.error('not_found', `no site with client id "${clientId}": nothing ended`, { command: 'end-site-access', clientId });
    return EXIT.notFound;
  }
  const name = typeof client.clientName === 'string' ? client.clientName : undefined;
  const site = `"${clientId}"${name ? ` (${name})` : ''}`;
  if (!yes) {
    out.result({ command: 'end-site-access', clientId, done: false, site: { clientId, name: name ?? null } },
      `would end the access of ${site} for every person: every grant and token of it issued up to now; people sign in and consent again there. Run again with --yes to do it.`);
    return EXIT.notConfirmed;
  }
  const at = await host.plugin.endSiteAccess(clientId);
  out.result({ command: 'end-site-access', clientId, done: true, endedAt: new Date(at).toISOString() }, `ended the access of ${site} for every person, at ${new Date(at).toISOString()}. Rotate its secret too.`);
  return EXIT.done;
}

/** `end-account-access <accountId>`: plugin.endAccountAccess, with --yes (without: what the plugin holds of the person). */
export async function endAccountAccessCommand(host: HostModule, accountId: string, yes: boolean, out: Output): Promise<number> {
  if (!yes) {
    const held = await holds(host.plugin, accountId);
    out.result({ command: 'end-account-access', accountId, done: false, holds: held }, `${holdsText(accountId, held)}. Would end every grant and service session of the person at every site. Run again with --yes to do it.`);
    return EXIT.notConfirmed;
  }
  const at = await host.plugin.endAccountAccess(accountId);
  out.result({ command: 'end-account-access', accountId, done: true, endedAt: new Date(at).toISOString() }, `ended every grant and service session of "${accountId}", at ${new Date(at).toISOString()}.`);
  return EXIT.done;
}

/** `delete-account <accountId>`: plugin.deleteAccount, with --yes (without: what the plugin holds of the person). */
export async function deleteAccountCommand(host: HostModule, accountId: string, yes: boolean, out: Output): Promise<number> {
  if (!yes) {
    const held = await holds(host.plugin, accountId);
    out.result({ command: 'delete-account', accountId, done: false, holds: held }, `${holdsText(accountId, held)}. Would delete the person: their sites told, every session and grant ended, every key erased. Run again with --yes to do it.`);
    return EXIT.notConfirmed;
  }
  const result = await host.plugin.deleteAccount(accountId);
  out.result({ command: 'delete-account', accountId, done: true, ...result },
    `deleted "${accountId}": ${n(result.sites)} site${result.sites === 1 ? '' : 's'} told, ${n(result.keysErased)} keys erased, ${n(result.jobsDropped)} queued jobs dropped. Erase your own records of the person too.`);
  return EXIT.done;
}
