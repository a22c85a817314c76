/**
 * What `npm run mutate` mutation-tests: each core module with the test files
 * that exercise it (Stryker runs, for each mutant, only the tests that cover
 * it). Equivalent mutants are marked in the sources with
 * `// Stryker disable next-line <mutator>: <why it cannot be told apart>`.
 */
export interface MutationModule {
  /** The name on the command line and of its report files. */
  name: string;
  /** The files mutated (globs). */
  mutate: string[];
  /** The test files run against the mutants (globs). */
  spec: string[];
  /**
   * A fresh test process for every mutant: for modules with state of their
   * own (a memo), which would otherwise carry answers from one mutant's run
   * into the next and let mutants survive by luck.
   */
  freshProcess?: boolean;
  /**
   * Test files run a second time on a Redis Cluster of the run's own: code
   * that only a Cluster reaches (one script per hash slot) is mutation-tested
   * there, and a mutant counts as killed when either run kills it.
   */
  clusterSpec?: string[];
}

/** The loss-of-access suites: Block site, Remove access, theft of a refresh token, an organization's removal. */
const LOSS_OF_ACCESS = ['test/e2e/block-site.test.ts', 'test/e2e/remove-access.test.ts', 'test/e2e/refresh-theft.test.ts', 'test/e2e/org-removal.test.ts'];

export const MODULES: readonly MutationModule[] = [
  {
    name: 'tell',
    // The one way the sites hear of a loss of access (src/tell/): each cause through both channels.
    mutate: ['src/tell/*.ts'],
    spec: [
      'test/e2e/shared-signals-causes.test.ts', 'test/e2e/shared-signals.test.ts', 'test/e2e/sessions.test.ts', 'test/e2e/session-expiry.test.ts',
      'test/e2e/backchannel-retry.test.ts', 'test/e2e/session-end-stay-signed-in.test.ts', ...LOSS_OF_ACCESS,
    ],
  },
  {
    name: 'queue-kit',
    // The durable queue and its in-process twin, the throttled log, the queues' counts.
    mutate: ['src/queue/*.ts'],
    spec: ['test/queue/*.test.ts', 'test/plugin/queues.test.ts', 'test/e2e/backchannel-retry.test.ts', 'test/e2e/shared-signals-outcomes.test.ts'],
    clusterSpec: ['test/queue/*.test.ts'],
  },
  {
    name: 'neutralize-links',
    mutate: ['src/text/neutralize-links.ts', 'src/text/known-zones.ts', 'src/text/bounded-memo.ts'],
    spec: ['test/text/neutralize-links-*.test.ts', 'test/text/bounded-memo.test.ts', 'test/views/notification-letter-*.test.ts'],
    freshProcess: true,
  },
  {
    name: 'notify-route',
    // POST /api/notify's steps, the one validate step, and its store steps.
    mutate: ['src/api/notify.ts', 'src/api/notify/*.ts', 'src/http/validate.ts', 'src/notify/site-and-person.ts'],
    // loss-of-access: an organization's site, whose removed members get nothing.
    spec: ['test/e2e/notify-*.test.ts', 'test/e2e/early-answers.test.ts', 'test/e2e/defaults.test.ts', 'test/e2e/letters.test.ts', ...LOSS_OF_ACCESS],
    // A Cluster takes notify_client then notify_account instead of notify.lua.
    clusterSpec: ['test/e2e/notify-*.test.ts', ...LOSS_OF_ACCESS],
  },
  {
    name: 'store-adapter',
    // The adapter, split along its ideas (the reuse leeway, the consume, the batch, the reads and the "ended before" marks).
    mutate: ['adapters/*.ts', '!adapters/redis.ts', '!adapters/memory.ts'],
    spec: [
      'test/adapters/*.test.ts', 'test/e2e/foundation.test.ts', 'test/e2e/revocation.test.ts', 'test/e2e/refresh-leeway.test.ts',
      'test/e2e/token-batch.test.ts', 'test/e2e/token-keys.test.ts', 'test/e2e/defaults.test.ts',
      'test/e2e/ended-*.test.ts', 'test/e2e/refresh-chain-findings.test.ts', 'test/e2e/public-leeway-dpop.test.ts',
    ],
    clusterSpec: ['test/adapters/contract.test.ts', 'test/e2e/token-batch.test.ts', 'test/e2e/refresh-leeway.test.ts', 'test/cluster/leeway-unwritten.cluster.ts'],
  },
  {
    name: 'provider',
    // The provider steps where a wrong line hurts a person or a site: end-session's hint matching, the token endpoint's write batch; theft's report and oidc-provider's own reuse path.
    mutate: ['src/provider/end-session.ts', 'src/provider/token-batch.ts', 'src/theft/*.ts'],
    spec: [
      'test/e2e/session-end-*.test.ts', 'test/e2e/token-batch.test.ts', 'test/e2e/foundation.test.ts', 'test/e2e/revocation.test.ts',
      ...LOSS_OF_ACCESS, 'test/e2e/refresh-leeway.test.ts', 'test/e2e/code-flow-only.test.ts', 'test/e2e/outbound-fetch.test.ts',
      'test/plugin/options.test.ts', 'test/e2e/prompts.test.ts', 'test/e2e/theft-notice.test.ts',
    ],
  },
  {
    name: 'site-access',
    mutate: ['src/sites/access.ts'],
    spec: [...LOSS_OF_ACCESS, 'test/e2e/console-api.test.ts', 'test/e2e/outbound-fetch.test.ts'],
  },
  {
    name: 'send-letter',
    mutate: ['src/notify/send-letter.ts'],
    spec: ['test/e2e/letter-outcomes.test.ts', 'test/e2e/letters.test.ts', 'test/e2e/notify-*.test.ts', 'test/e2e/language.test.ts', 'test/e2e/theft-notice.test.ts', 'test/plugin/letter-worker.test.ts'],
  },
  {
    name: 'console-api',
    mutate: ['src/console/api.ts'],
    spec: ['test/e2e/console-api.test.ts', ...LOSS_OF_ACCESS],
  },
  {
    name: 'login-codes',
    mutate: ['examples/reference/login-codes.ts'],
    spec: ['test/e2e/sign-in-*.test.ts', 'test/e2e/prompts.test.ts'],
  },
  {
    name: 'ssf-transmitter',
    // The Shared Signals transmitter: a cause fanned out into SETs, each pushed, kept for the poll or held; the SET queue; the push.
    mutate: ['src/ssf/transmitter.ts', 'src/ssf/set-queue.ts', 'src/ssf/push.ts', 'src/ssf/signal.ts'],
    spec: [
      'test/e2e/shared-signals.test.ts', 'test/e2e/shared-signals-causes.test.ts', 'test/e2e/shared-signals-control.test.ts',
      'test/e2e/shared-signals-interop.test.ts', 'test/e2e/shared-signals-outbound.test.ts', 'test/e2e/shared-signals-outcomes.test.ts',
      'test/e2e/delete-account.test.ts',
    ],
  },
  {
    name: 'backchannel-logout',
    // Back-Channel Logout, retried and shown: its first try, the queue's tries, the outcomes; the logout queue.
    mutate: ['src/notify/backchannel-logout.ts', 'src/notify/logout-queue.ts'],
    spec: [
      'test/e2e/backchannel-retry.test.ts', 'test/e2e/sessions.test.ts', 'test/e2e/session-end-sign-out.test.ts', 'test/e2e/delete-account.test.ts',
      'test/e2e/foundation.test.ts', 'test/e2e/outbound-fetch.test.ts', 'test/plugin/options.test.ts', 'test/e2e/backchannel-erased.test.ts',
      'test/e2e/backchannel-once.test.ts',
    ],
  },
  {
    name: 'delete-account',
    // Delete my account (plugin.deleteAccount) and the console's data copy before it.
    mutate: ['src/sites/delete-account.ts', 'src/console/export.ts'],
    spec: ['test/e2e/delete-account.test.ts', 'test/e2e/delete-account-console.test.ts', 'test/e2e/console-export-rate.test.ts', 'test/e2e/shared-signals-causes.test.ts'],
  },
  {
    name: 'security-notices',
    // The security notices (held back within the day, new browsers summed up) and the new-browser step that gives one.
    mutate: ['src/notify/security-notices.ts', 'src/provider/new-browser.ts'],
    spec: ['test/e2e/security-notices*.test.ts', 'test/e2e/theft-notice.test.ts', 'test/e2e/backchannel-retry.test.ts'],
  },
  {
    name: 'ended-marks',
    // The "ended before" marks and the reuse leeway's answer again and redo.
    mutate: ['adapters/ended.ts', 'adapters/leeway.ts', 'src/store/ended-keys.ts'],
    spec: [
      'test/adapters/*.test.ts', 'test/e2e/ended-*.test.ts', 'test/e2e/end-site-access.test.ts', 'test/e2e/refresh-leeway.test.ts',
      'test/e2e/public-leeway-dpop.test.ts', 'test/e2e/refresh-chain-findings.test.ts', 'test/e2e/sessions.test.ts',
    ],
    // A Cluster goes one script per hash slot for the leeway's redo.
    clusterSpec: ['test/e2e/refresh-leeway.test.ts', 'test/cluster/leeway-unwritten.cluster.ts', 'test/e2e/ended-*.test.ts'],
  },
  {
    name: 'recent-sign-in',
    // A recent sign-in for what adds access: the check and the page before the sign-in.
    mutate: ['src/console/recent-sign-in.ts', 'src/console/sign-in-again.ts'],
    spec: ['test/e2e/recent-sign-in.test.ts', 'test/e2e/recent-sign-in-contacts.test.ts', 'test/e2e/delete-account-console.test.ts', 'test/views/sign-in-again-page.test.ts', 'test/plugin/options.test.ts'],
  },
];
