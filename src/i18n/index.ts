import { en } from './messages/en.ts';
import { de } from './messages/de.ts';
import { fr } from './messages/fr.ts';
import { ar } from './messages/ar.ts';

export const LOCALES = ['en', 'de', 'fr', 'ar'] as const;
export type Locale = typeof LOCALES[number];
export type MessageKey = keyof typeof en;

const CATALOGS: Record<Locale, Record<MessageKey, string>> = { en, de, fr, ar };

// 'ar' is the one right-to-left locale so far; the others are listed so a new one flips the direction without touching callers.
const RTL_LANGUAGES: ReadonlySet<string> = new Set(['ar', 'fa', 'he', 'ur', 'ps', 'yi']);

export function isLocale(x: unknown): x is Locale {
  return typeof x === 'string' && (LOCALES as readonly string[]).includes(x);
}

/** Maps a language tag such as `de-CH` or `FR_fr` to a supported locale. */
function matchTag(tag: string): Locale | undefined {
  const lower = tag.trim().toLowerCase();
  if (isLocale(lower)) return lower;
  const primary = lower.split(/[-_]/, 1)[0];
  return isLocale(primary) ? primary : undefined;
}

function parseAcceptLanguage(header: string): string[] {
  const entries: { tag: string; q: number }[] = [];
  for (const part of header.split(',')) {
    const [tag = '', ...params] = part.split(';').map((s) => s.trim());
    const qParam = params.find((p) => /^q\s*=/i.test(p));
    const q = qParam === undefined ? 1 : Number(qParam.replace(/^q\s*=\s*/i, ''));
    if (tag === '' || tag === '*' || !(q > 0 && q <= 1)) continue;
    entries.push({ tag, q });
  }
  // Array#sort is stable, so equal q-values keep header order.
  return entries.sort((a, b) => b.q - a.q).map((e) => e.tag);
}

function firstMatch(tags: Iterable<string>): Locale | undefined {
  for (const tag of tags) {
    const locale = matchTag(tag);
    if (locale) return locale;
  }
  return undefined;
}

export function negotiateLocale(
  input: { uiLocales?: string | undefined; acceptLanguage?: string | undefined; preferred?: string | undefined },
  fallback: Locale = 'en',
): Locale {
  return (
    (input.preferred ? matchTag(input.preferred) : undefined) ??
    firstMatch((input.uiLocales ?? '').split(/\s+/).filter(Boolean)) ??
    firstMatch(parseAcceptLanguage(input.acceptLanguage ?? '')) ??
    fallback
  );
}

export function t(locale: Locale, key: MessageKey, params?: Record<string, string | number>): string {
  const template = CATALOGS[locale][key] ?? en[key];
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

export function direction(locale: Locale): 'ltr' | 'rtl' {
  return RTL_LANGUAGES.has(locale) ? 'rtl' : 'ltr';
}
