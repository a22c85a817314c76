/**
 * The two tiers of the suite (docs/testing.md): `npm test` runs every
 * behaviour at the smallest size that still proves it; the scale tier
 * (OSN_TEST_SCALE=full) runs the same tests at full size. A test picks its
 * size here, never from a variable of its own, so both tiers run one test.
 */
export const FULL_SCALE = process.env.OSN_TEST_SCALE === 'full';

/** `small` in the default tier, `full` in the scale tier. */
export function scale<T>(small: T, full: T): T {
  return FULL_SCALE ? full : small;
}
