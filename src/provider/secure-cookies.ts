import type Provider from 'oidc-provider';

import type { Logger } from '../host.ts';

/**
 * oidc-provider marks its cookies (the session's, the interaction's) Secure
 * only when the request is (`ctx.secure`). Behind a proxy that ends TLS, a
 * request reaches Node as plain HTTP, and Koa reads `X-Forwarded-Proto` only
 * with `provider.proxy`: the cookies go out without Secure, and a browser
 * sends them over plain HTTP too. Start-up cannot tell whether this process
 * serves TLS itself (then all is well), so it warns and does not refuse.
 */
export function warnOfInsecureCookies(provider: Provider, logger: Logger): void {
  if (new URL(provider.issuer).protocol !== 'https:' || provider.proxy) return;
  logger.warn(`oidc-signout-notify: COOKIES WITHOUT Secure BEHIND A TLS PROXY: the issuer ${provider.issuer} is https but provider.proxy is not set, so oidc-provider sets Secure only on requests that reach this process over TLS. Behind a proxy or load balancer that terminates TLS, set provider.proxy = true (and provider.maxIpsCount to the number of proxies); if this process serves TLS itself, nothing needs to change.`);
}
