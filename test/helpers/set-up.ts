/**
 * The hooks of a test file whose tests share one service: `start()` before
 * the tests of the describe it is called in, `bind` handing its parts to the
 * file's own variables, and `close()` after the tests (also when a test
 * failed). Returns what `start()` gave, for the tests and their steps.
 */
export function setUp<T extends { close(): Promise<void> }>(start: () => Promise<T>, bind: (started: T) => void = () => {}): () => T {
  let started: T | undefined;
  before(async () => {
    started = await start();
    bind(started);
  });
  after(() => started?.close());
  return () => {
    if (!started) throw new Error('setUp: used before its before() hook ran');
    return started;
  };
}
