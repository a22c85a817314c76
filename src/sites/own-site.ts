/** What the rule needs of a client: its registered metadata. */
export interface SiteMetadata {
  clientUri?: string | undefined;
  redirectUris?: readonly string[] | undefined;
}

function hostOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return new URL(value).host;
  } catch {
    return undefined;
  }
}

/**
 * The site's own hosts: the hosts of its registered `client_uri` and
 * `redirect_uris`, as WHATWG URL normalises them (lower case, punycode,
 * default port dropped, explicit other port kept).
 */
export function siteHosts(client: SiteMetadata): Set<string> {
  const hosts = [client.clientUri, ...(client.redirectUris ?? [])].map(hostOf);
  return new Set(hosts.filter((h): h is string => h !== undefined));
}

/**
 * The notification's `url` rule: an https URL whose host is exactly one of the
 * site's own hosts. Parsed with WHATWG URL and compared as a whole host, so
 * look-alike hosts (`site.example.evil.com`, IDN homographs), userinfo
 * (`https://site.example@evil.com`), other ports and other schemes fail.
 * Anything a mail client might read differently from a browser (backslashes,
 * spaces, control characters) is refused outright.
 */
export function urlAllowed(raw: string, hosts: ReadonlySet<string>): boolean {
  if (/[\\\s\u0000-\u001F\u007F-\u009F]/u.test(raw)) return false;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return false;
  return hosts.has(url.host);
}
