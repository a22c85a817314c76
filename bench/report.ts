/** Markdown output: tables and number formats. */

export function table(headers: string[], rows: (string | number)[][]): string {
  const cell = (v: string | number) => String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    `| ${headers.map(cell).join(' | ')} |`,
    `|${headers.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Whole numbers with thousands separators. */
export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');

/** Milliseconds: 2 decimals under 10, 1 under 100, else whole. */
export function ms(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (n < 10) return n.toFixed(2);
  if (n < 100) return n.toFixed(1);
  return Math.round(n).toString();
}

export const num = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

export const check = (pass: boolean) => (pass ? '✓' : '✗');

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (Math.abs(n) >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${Math.round(n)} B`;
}
