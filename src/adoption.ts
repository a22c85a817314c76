/**
 * oidc-signout-notify/adopt: taking over a running provider's sessions,
 * grants and tokens from the adapter it had, with nobody signed out
 * (docs/upgrading.md "Taking over from your previous adapter"). The previous
 * stores the package knows, their listings for the bulk import, and the
 * import itself.
 */
import type { ImportOptions, ImportProgress } from './adopt/import.ts';
import type { SignoutNotify } from './signout-notify.ts';

export { exampleRedisAdapter, exampleRedisRecords, type ExampleRedisOptions } from '../adapters/previous/example-redis.ts';
export { layout01Adapter, layout01Records, type Layout01Options } from '../adapters/previous/layout-0-1.ts';
export type { PreviousAdapter, PreviousRecordId, RecordSource, RecordSourceInput } from '../adapters/previous/types.ts';
export type { ImportOptions, ImportProgress } from './adopt/import.ts';
export type { Adoption, AdoptionStatus } from './adopt/adoption.ts';
export { ImportRunningError } from './adopt/lease.ts';

/**
 * The bulk import (docs/upgrading.md): moves every record the previous
 * store's listing names into the plugin's store, exactly once, paced,
 * resumable after a crash, and closes the window when done. The same as
 * `plugin.adoption.importRecords(options)`; the operator's command runs it.
 */
export function importPrevious(plugin: SignoutNotify, options?: ImportOptions): Promise<ImportProgress> {
  if (!plugin.adoption) return Promise.reject(new TypeError('oidc-signout-notify: importPrevious needs the plugin made with previousAdapter'));
  return plugin.adoption.importRecords(options);
}
