import type { Dispatcher } from './tls.ts';

/**
 * A minimal browser for tests: a cookie jar, manual redirects and HTML forms.
 * It talks HTTP to the real servers, as a person's browser would without JavaScript.
 */
export interface Response {
  status: number;
  url: string;
  location?: string;
  headers: Headers;
  body: string;
}

export interface Form {
  action: string;
  method: string;
  fields: Record<string, string>;
}

export class Agent {
  readonly cookies = new Map<string, Map<string, string>>();
  acceptLanguage = 'en';
  /** Sent with every request (e.g. the X-Forwarded-For a proxy in front would add). */
  headers: Record<string, string> = {};

  /** The connection pool requests go through (one that trusts a test's throwaway certificate). */
  readonly dispatcher?: Dispatcher;

  constructor(dispatcher?: Dispatcher) {
    this.dispatcher = dispatcher;
  }

  #cookieHeader(url: URL): string {
    const jar = this.cookies.get(url.host);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }

  #store(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const jar = this.cookies.get(url.host) ?? new Map<string, string>();
      const expired = /expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
      this.cookies.set(url.host, jar);
    }
  }

  async request(method: string, href: string, body?: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    const url = new URL(href);
    const init: RequestInit = {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.#cookieHeader(url),
        accept: 'text/html,application/xhtml+xml',
        'accept-language': this.acceptLanguage,
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...this.headers,
        ...headers,
      },
      body: body ? new URLSearchParams(body).toString() : undefined,
      ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
    };
    const res = await fetch(url, init);
    this.#store(url, res.headers);
    const location = res.headers.get('location');
    return {
      status: res.status,
      url: url.href,
      location: location ? new URL(location, url).href : undefined,
      headers: res.headers,
      body: await res.text(),
    };
  }

  get(href: string) {
    return this.request('GET', href);
  }

  /** Follows redirects (GET) until a response is not a redirect or `stop(url)` says so. */
  async follow(start: Response, stop: (url: string) => boolean = () => false): Promise<Response> {
    let res = start;
    for (let hops = 0; res.location && hops < 20; hops += 1) {
      if (stop(res.location)) return res;
      res = await this.get(res.location);
    }
    return res;
  }

  async submit(page: Response, form: Form, extra: Record<string, string> = {}): Promise<Response> {
    return this.request(form.method.toUpperCase(), new URL(form.action, page.url).href, { ...form.fields, ...extra });
  }
}

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag);
  return m ? decodeEntities(m[1]!) : undefined;
};

function decodeEntities(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Every form of a page with its hidden and pre-filled fields. */
export function forms(html: string): Form[] {
  const out: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const fields: Record<string, string> = {};
    for (const input of m[2]!.matchAll(/<input\b[^>]*>/gi)) {
      const name = attr(input[0], 'name');
      // As a browser submits: radio buttons and checkboxes only when checked.
      const choice = /\stype="(radio|checkbox)"/i.test(input[0]);
      if (name && (!choice || /\schecked\b/i.test(input[0]))) fields[name] = attr(input[0], 'value') ?? (choice ? 'on' : '');
    }
    out.push({ action: attr(m[1]!, 'action') ?? '', method: attr(m[1]!, 'method') ?? 'get', fields });
  }
  return out;
}

/** The form whose action ends with `suffix`. */
export function formFor(html: string, suffix: string): Form {
  const form = forms(html).find((f) => f.action.endsWith(suffix));
  if (!form) throw new Error(`no form posting to *${suffix} in:\n${html.slice(0, 2000)}`);
  return form;
}
