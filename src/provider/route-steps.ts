import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { pathMatcher, routeMatcher, routePrefixMatcher } from './paths.ts';

/** Which requests a step is for, by path (matched as oidc-provider's router matches: ./paths.ts). */
export type Where =
  /** The named routes of oidc-provider. */
  | { routes: string[] }
  /** The named routes and every path below them (the authorization endpoint's resume). */
  | { under: string[] }
  /** Paths given as they are (a route with more than one path, such as discovery's). */
  | { paths: string[] }
  /** Every path but the named routes'. */
  | { except: string[] }
  /** Paths a check of the step's own decides (the plugin's routes). */
  | { test: (path: string) => boolean };

/** A step of attach() with the requests it is for. */
export interface RouteStep {
  where: Where;
  step: Middleware;
}

function matcherOf(provider: Provider, where: Where): (path: string) => boolean {
  if ('routes' in where) return routeMatcher(provider, where.routes);
  if ('under' in where) return routePrefixMatcher(provider, where.under);
  if ('paths' in where) return pathMatcher(where.paths);
  if ('test' in where) return where.test;
  const skipped = routeMatcher(provider, where.except);
  return (path) => !skipped(path);
}

/** The named routes' paths as middleware sees them; a feature the provider lacks has none. */
function routePaths(provider: Provider, names: string[]): string[] {
  return names.flatMap((name) => {
    try {
      return [provider.pathFor(name, { mountPath: '' })];
    } catch {
      return [];
    }
  });
}

/** The steps in order, as one (each calls the next; the last the request's next), or null for none. */
function chain(steps: Middleware[]): Middleware | null {
  if (steps.length === 0) return null;
  return steps.reduceRight((inner, outer) => (ctx, next) => outer(ctx, () => inner(ctx, next)));
}

/**
 * attach()'s steps as one step of the provider, in their order: a request
 * runs only the steps that are for its path. Each step used to check its own
 * path on every request, one Koa layer each (a bound dispatch and a promise
 * apiece); now the path picks the chain. The chains of the routes the steps
 * name, spelled as the provider spells them (the hot JSON endpoints among
 * them), are built once; any other path (another spelling, a path of no
 * route) gets its chain built for the request, so nothing a client sends
 * is kept.
 */
export function routeSteps(provider: Provider, steps: RouteStep[]): Middleware {
  const tests = steps.map(({ where }) => matcherOf(provider, where));
  const chainFor = (path: string) => chain(steps.filter((_, i) => tests[i]!(path)).map(({ step }) => step));
  const named = steps.flatMap(({ where }) => ('routes' in where ? where.routes : 'under' in where ? where.under : 'except' in where ? where.except : []));
  const known = new Map<string, Middleware | null>();
  for (const path of routePaths(provider, named)) known.set(path, chainFor(path));
  for (const { where } of steps) if ('paths' in where) for (const path of where.paths) known.set(path, chainFor(path));
  return (ctx, next) => {
    const found = known.get(ctx.path);
    const steps = found === undefined ? chainFor(ctx.path) : found;
    return steps ? steps(ctx, next) : next();
  };
}
