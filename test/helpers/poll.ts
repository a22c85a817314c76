/**
 * Waiting in tests: for a condition, polled until a deadline, never a fixed
 * sleep that hopes the condition holds by then (a busy machine makes it
 * late). A fixed sleep stays only where a test waits for something NOT to
 * happen (a second letter, a retry), and says so.
 */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` holds; throws `timed out waiting for <what>` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
