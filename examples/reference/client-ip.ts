import { BlockList, isIP } from 'node:net';

import type { Context } from 'koa';
import type Provider from 'oidc-provider';

/**
 * The proxies in front of the provider: none (`false`, 0), how many (each
 * appends the address it received the request from to `X-Forwarded-For`),
 * or their addresses and ranges (`10.0.0.5`, `10.0.0.0/8`, `::1`).
 */
export type TrustProxy = boolean | number | string[];

/**
 * Where the client's IP comes from, which the sign-in's per-IP limits key on.
 * Koa's `proxy = true` alone takes the leftmost `X-Forwarded-For` entry,
 * which the client writes itself (KNOWN-TRAPS 21). With a count, the entry
 * the outermost trusted proxy appended (Koa's `maxIpsCount`); with a list,
 * the nearest hop, walking from the socket back through `X-Forwarded-For`,
 * that is not one of the listed proxies.
 */
export function trustProxies(provider: Provider, trust: TrustProxy | undefined): void {
  if (trust === undefined || trust === false || trust === 0) return;
  provider.proxy = true;
  if (!Array.isArray(trust)) {
    provider.maxIpsCount = trust === true ? 1 : trust;
    return;
  }
  const proxies = blockList(trust);
  provider.use((ctx, next) => {
    ctx.request.ip = clientIp(ctx, proxies);
    return next();
  });
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** A BlockList of addresses and CIDR ranges; throws TypeError naming a bad entry. */
export function blockList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    if (!isIP(address) || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) {
      throw new TypeError(`not an IP address or CIDR range: "${entry}"`);
    }
    if (prefix === undefined) list.addAddress(address, family(address));
    else list.addSubnet(address, Number(prefix), family(address));
  }
  return list;
}

/** IPv4-mapped IPv6 (`::ffff:10.0.0.5`) as the IPv4 address it is. */
function plain(address: string): string {
  return address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
}

function clientIp(ctx: Context, proxies: BlockList): string {
  const hops = [
    ...ctx.get('x-forwarded-for').split(',').map((h) => h.trim()).filter(Boolean),
    ctx.socket.remoteAddress ?? '',
  ].map(plain);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i]!;
    // Anything that is not an address cannot be a trusted proxy: it is where the chain stops.
    if (!isIP(hop) || !proxies.check(hop, family(hop)) || i === 0) return hop;
  }
  return hops[0] ?? '';
}
