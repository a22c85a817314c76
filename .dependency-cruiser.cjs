/**
 * The import rules of docs/architecture.md, checked by `npm test`
 * (test/architecture.test.ts runs dependency-cruiser with this file).
 * Layers, bottom to top; a module imports its own layer or lower ones only:
 *   base     src/store, src/text, src/i18n, src/mail, src/queue (the queue kit) and the small files beside them
 *   adapters adapters/ (oidc-provider's Adapter), on base
 *   views    views/ (pure functions of data), on src/i18n, src/text and the host types
 *   domain   src/sites, src/sessions, src/orgs, src/notify, src/theft, src/ssf, src/adopt, src/tell, src/upstream-signals and the domain files beside them
 *   web      src/http, src/provider, src/console, src/api
 *   root     src/plugin.ts, src/options.ts, the package's entry points and the operator's command (src/command/)
 * examples/ use the package's entry points only; nothing outside test/ imports test/.
 * src/api/openapi/ generates the OpenAPI document with zod-openapi, a devDependency: the package never loads it.
 */
const BASE = '^src/(store|text|i18n|mail|queue)/|^src/(host|log|random-pool|write-throttle|console-client|provider-types)\\.ts$';
const ADAPTERS = '^adapters/';
const VIEWS = '^views/';
const DOMAIN = '^src/(sites|sessions|orgs|notify|theft|ssf|adopt|tell|upstream-signals)/|^src/(events|preferences)\\.ts$';
const WEB = '^src/(http|provider|console|api)/';
const ROOT = '^src/(plugin|options|upstream-signals-options|parts|attach|routes|signout-notify|index|worker|pages|store-kit|adoption)\\.ts$|^src/command/';
const ENTRY_POINTS = '^src/(index|worker|pages|store-kit|adoption)\\.ts$|^adapters/(redis|memory)\\.ts$';

/** The packages each layer may import (its own types included): a view that imports ioredis, or a domain module bullmq, fails. */
const PACKAGES = {
  base: ['ioredis', 'bullmq', 'nodemailer', 'oidc-provider', 'tldts'],
  adapters: ['ioredis', 'jose', 'oidc-provider'],
  views: [],
  domain: ['jose', 'oidc-provider', 'bowser'],
  web: ['@koa/router', 'koa', 'oidc-provider', 'jose', 'zod', 'zod-openapi'],
};
const NPM = ['npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-no-pkg', 'npm-unknown'];
const escape = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A rule that keeps `from` to the packages in `allowed` (and their @types). */
const packages = (name, from, allowed) => ({
  name,
  comment: `This layer imports these packages only: ${allowed.join(', ') || 'none'} (docs/architecture.md).`,
  severity: 'error',
  from: { path: from },
  to: { dependencyTypes: NPM, pathNot: allowed.length ? `^node_modules/(@types/)?(${allowed.map(escape).join('|')})/` : '^$' },
});

/** A rule that keeps `from` to the paths in `allowed` (and node's and the packages'). */
const only = (name, comment, from, allowed) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { pathNot: [allowed, '^node_modules/', '^node:'].join('|'), dependencyTypesNot: ['core', 'npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-no-pkg', 'npm-unknown'] },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No file cycles: a cycle makes both ends one module in all but name.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    only('base-stays-base', 'The store, text, i18n and mail know nothing of what is built on them.', BASE, BASE),
    only('adapters-on-base', 'The oidc-provider adapter is built on the store alone.', ADAPTERS, `${ADAPTERS}|${BASE}`),
    only('views-are-pure', 'Views are functions of data: the language, the text rules and the host types only.', VIEWS, `${VIEWS}|^src/(i18n|text)/|^src/host\\.ts$`),
    only('domain-below-web', 'What the plugin keeps and decides never reaches up to routes or the composition.', DOMAIN, `${DOMAIN}|${BASE}|${ADAPTERS}|${VIEWS}`),
    only('web-below-root', 'Routes and provider steps never import the composition root.', WEB, `${WEB}|${DOMAIN}|${BASE}|${ADAPTERS}|${VIEWS}`),
    packages('base-packages', BASE, PACKAGES.base),
    packages('adapters-packages', ADAPTERS, PACKAGES.adapters),
    packages('views-packages', VIEWS, PACKAGES.views),
    packages('domain-packages', DOMAIN, PACKAGES.domain),
    packages('web-packages', WEB, PACKAGES.web),
    {
      name: 'every-file-in-a-layer',
      comment: 'A file of src/ belongs to one of the layers above (add it to one, or make a folder of a layer).',
      severity: 'error',
      from: { path: '^src/', pathNot: [BASE, DOMAIN, WEB, ROOT].join('|') },
      to: {},
    },
    {
      name: 'every-file-in-a-layer-alone',
      comment: 'The same for a file of src/ that imports nothing and nothing imports.',
      severity: 'error',
      from: { orphan: true, path: '^src/', pathNot: [BASE, DOMAIN, WEB, ROOT].join('|') },
      to: {},
    },
    only('examples-use-the-package', 'The reference provider and the demo site use what the package exports, as a host does.', '^examples/', `^examples/|${ENTRY_POINTS}`),
    {
      name: 'openapi-generator-at-build-time',
      comment: 'src/api/openapi/ generates the OpenAPI document with zod-openapi, a devDependency (docs/choices.md): scripts/build.ts, the tests and the route run from the sources load it; nothing of the package imports it but for types. (A zod-openapi import elsewhere fails the consumer test: the host app has no devDependencies.)',
      severity: 'error',
      from: { path: '^(src|adapters|views)/', pathNot: '^src/api/openapi/' },
      to: { path: '^src/api/openapi/', dependencyTypesNot: ['type-only', 'type-import'] },
    },
    {
      name: 'test-stays-in-test',
      comment: 'Nothing outside test/ imports the tests or their helpers.',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'nothing-imports-bench-or-examples',
      comment: 'The package never depends on the bench or the examples.',
      severity: 'error',
      from: { path: '^(src|adapters|views|scripts)/' },
      to: { path: '^(bench|examples)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules is not followed, but kept as a target: the packages rules see what each layer imports.
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6'],
  },
};
