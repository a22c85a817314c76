import type { Locale } from '../../../src/pages.ts';

/**
 * A wait as people say it, in their language: "3 minutes", "2 hours"
 * (rounded up, so the page never promises less than the limit gives).
 */
export function formatWait(locale: Locale, ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  const [value, unit] = minutes < 120 ? [minutes, 'minute'] : [Math.ceil(minutes / 60), 'hour'];
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(value);
}
