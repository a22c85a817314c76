const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

export class SafeHtml {
  readonly value: string;

  constructor(value: string) {
    this.value = value;
  }

  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

export function raw(s: string): SafeHtml {
  return new SafeHtml(s);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    out += render(values[i]) + (strings[i + 1] ?? '');
  }
  return new SafeHtml(out);
}

// Lets a translated sentence carry markup around its placeholders (e.g. <strong>{email}</strong>)
// without trusting the translation itself: literal text is escaped, params are rendered as usual.
export function fillHtml(template: string, params: Readonly<Record<string, HtmlValue>>): SafeHtml {
  let out = '';
  let last = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    const name = m[1] ?? '';
    out += escapeHtml(template.slice(last, m.index));
    out += Object.hasOwn(params, name) ? render(params[name]) : escapeHtml(m[0]);
    last = m.index + m[0].length;
  }
  return new SafeHtml(out + escapeHtml(template.slice(last)));
}
