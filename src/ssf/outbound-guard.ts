import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/*
 * The guard of every request a site can aim (KNOWN-TRAPS 29, docs/security.md
 * "Outgoing requests"): the special-use address ranges oidc-provider's own
 * guard refuses (lib/helpers/fetch_request.js: the IANA IPv4 and IPv6
 * Special-Purpose Address Registries), plus multicast, IPv4-compatible IPv6
 * and the deprecated site-local range. oidc-provider looks at the socket once
 * it is connected; this guard looks at the DNS answer, so no connection is
 * opened to such an address at all and nothing (a TLS hello, a header) is
 * sent there.
 */
const SPECIAL_USE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.31.196.0', 24], ['192.52.193.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['192.175.48.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_USE.addSubnet(net, bits, 'ipv4');
// IPv4-mapped addresses (::ffff:0:0/96) are checked by the IPv4 ranges above (BlockList maps them).
for (const [net, bits] of [
  ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 63], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16],
  ['2620:4f:8000::', 48], ['3fff::', 20], ['5f00::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) SPECIAL_USE.addSubnet(net, bits, 'ipv6');

/** Whether an IP address (v4 or v6, mapped and compatible forms too) is loopback, private, link-local, unique-local or otherwise special-use. */
export function specialUseAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && SPECIAL_USE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why a URL's host may not be reached, read from the URL alone: an IP
 * literal in a special-use range (the WHATWG parser has already turned
 * `127.1`, `0x7f000001`, `2130706433` into `127.0.0.1` and
 * `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`), or a name that is loopback by
 * definition (`localhost`, `*.localhost`, RFC 6761 section 6.3; a trailing
 * dot too). Any other name is checked where it resolves (guardedLookup).
 */
export function specialUseHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || specialUseAddress(host);
}

/** A request refused by the guard: not an outage of the receiver, so not tried again. */
export class OutboundRefused extends Error {}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * `lookup` for node:net (an http.Agent's connections): resolves the name,
 * and refuses it when any of its addresses is special-use, before a socket
 * connects. Every address, not only the first: the connection may try each
 * (RFC 8305). IP literals never come here (node connects to them as they
 * are): specialUseHost checks those first.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0 || addresses.some(({ address }) => specialUseAddress(address))) {
      return callback(new OutboundRefused('the endpoint resolves to a loopback, private or special-use address'), []);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
