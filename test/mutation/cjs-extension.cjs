// Mocha 12 ships its CLI helpers as .cjs files; @stryker-mutator/mocha-runner
// 10 requires them without an extension (`mocha/lib/cli/run-helpers`), which
// Node resolves only for the extensions it knows. Preloaded (NODE_OPTIONS
// --require) into Stryker and its test runner processes by `npm run mutate`,
// this lets that resolution find `.cjs` too. Nothing else changes.
const Module = require('node:module');

if (!Module._extensions['.cjs']) Module._extensions['.cjs'] = Module._extensions['.js'];
