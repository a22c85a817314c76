import type Provider from 'oidc-provider';

/**
 * The path of one of oidc-provider's routes as middleware on the provider
 * sees it in `ctx.path`. `pathFor` adds the issuer's path (an issuer such as
 * `https://id.example/oidc` is mounted at `/oidc`, and the host's mount
 * strips it from `ctx.path`); links and cookies want that one, comparisons
 * this one.
 */
function routePath(provider: Provider, name: string): string {
  return provider.pathFor(name, { mountPath: '' });
}

/**
 * Upper-cases as oidc-provider's router does before matching: ASCII always,
 * other characters unless they would turn into ASCII (so `/tokın` never
 * reaches `/token`).
 */
function fold(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(value)) return value.toUpperCase();
  let out = '';
  for (const char of value) {
    const upper = char.toUpperCase();
    out += upper.length === 1 && !(char.codePointAt(0)! > 127 && upper.codePointAt(0)! < 128) ? upper : char;
  }
  return out;
}

/** Folded paths of the named routes the provider has (a disabled feature has no route). */
function foldedPaths(provider: Provider, names: string[]): string[] {
  return names.flatMap((name) => {
    try {
      return [fold(routePath(provider, name))];
    } catch {
      return [];
    }
  });
}

/**
 * Whether a request path reaches one of the named routes, matched the way
 * oidc-provider's router matches it: case-insensitive, one trailing slash
 * allowed. A step that runs only for those routes must not miss `/Token/`.
 */
export function routeMatcher(provider: Provider, names: string[]): (path: string) => boolean {
  return pathMatcher(foldedPaths(provider, names));
}

/** routeMatcher for paths given as they are (routes with more than one path, such as discovery's). */
export function pathMatcher(routePaths: string[]): (path: string) => boolean {
  const paths = new Set(routePaths.map(fold));
  return (path) => {
    const folded = fold(path);
    return paths.has(folded) || (folded.length > 1 && folded.endsWith('/') && paths.has(folded.slice(0, -1)));
  };
}

/** Whether a request path starts with the path of one of the named routes (case-insensitive). */
export function routePrefixMatcher(provider: Provider, names: string[]): (path: string) => boolean {
  const prefixes = foldedPaths(provider, names);
  return (path) => {
    const folded = fold(path);
    return prefixes.some((p) => folded.startsWith(p));
  };
}
