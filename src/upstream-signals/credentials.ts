/** An access token of ours at an upstream, by the client credentials grant (RFC 6749 section 4.4), kept until shortly before it expires. */
export interface ClientCredentials {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

const TIMEOUT_MS = 10_000;

export function clientCredentialsTokens() {
  const tokens = new Map<string, { value: string; until: number }>();
  const keyOf = (c: ClientCredentials) => `${c.tokenEndpoint}\u0000${c.clientId}\u0000${c.scope}`;
  return {
    async get(c: ClientCredentials): Promise<string> {
      const cached = tokens.get(keyOf(c));
      if (cached && cached.until > Date.now()) return cached.value;
      const res = await fetch(c.tokenEndpoint, {
        method: 'POST', redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: c.scope }),
      });
      const answer = await res.json().catch(() => ({})) as { access_token?: unknown; expires_in?: unknown };
      if (!res.ok || typeof answer.access_token !== 'string') throw new Error(`token endpoint answered ${res.status}`);
      const lifetime = typeof answer.expires_in === 'number' ? answer.expires_in : 300;
      tokens.set(keyOf(c), { value: answer.access_token, until: Date.now() + Math.max(0, lifetime - 30) * 1000 });
      return answer.access_token;
    },
    /** The upstream refused the token (401): the next call gets a new one. */
    forget: (c: ClientCredentials) => { tokens.delete(keyOf(c)); },
  };
}
