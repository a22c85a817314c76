/**
 * The session expiry sweep runs where the letters' worker runs: with
 * `letters.worker: false` in the service, the separate worker process (the
 * reference provider with the service's keys, not listening) sweeps, and the
 * site gets its session-revoked SET and its logout token from there. On
 * Redis, and on the Cluster in the Cluster pass.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { Agent } from '../helpers/agent.ts';
import { sharedJwks } from '../helpers/instance.ts';
import { signIn } from '../helpers/reference.ts';
import { clusterClient, REDIS_CLUSTER } from '../helpers/redis.ts';
import { CAEP, received, settled, startExpiryService, type ExpiryService } from '../helpers/session-expiry.ts';
import { verifySet } from '../helpers/ssf-receiver.ts';

describe('session expiry swept by the letter worker\'s process (letters.worker: false in the service)', () => {
  let s: ExpiryService;
  let worker: ChildProcess | undefined;

  before(async function () {
    this.timeout(60_000);
    const jwks = await sharedJwks();
    s = await startExpiryService('expiry-worker', {
      embedded: false, sweepEveryMs: 3_600_000, jwks: JSON.parse(jwks) as { keys: never[] }, lettersWorker: false,
      ...(REDIS_CLUSTER ? { client: clusterClient(REDIS_CLUSTER) } : {}),
    });
    const script = fileURLToPath(new URL('../helpers/letter-worker.ts', import.meta.url));
    worker = spawn(process.execPath, [script], {
      env: { ...process.env, KEY_PREFIX: s.h.prefix, SMTP_URL: s.h.smtp.url, ISSUER: s.h.issuer, CLIENTS: JSON.stringify([s.site]), JWKS: jwks, SWEEP_MS: '200' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      worker!.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('worker ready')) resolve(); });
      worker!.once('exit', (code) => reject(new Error(`the worker ended (${code})`)));
    });
  });
  after(async () => {
    worker?.kill('SIGKILL');
    await s.close();
  });

  it('the worker process tells the site once: one session-revoked SET, one logout token', async () => {
    // The worker sends the sign-in code too (the service sends no letter itself).
    const { tokens } = await signIn(s.h, s.config, new Agent(), 'worker-lapse@example.com');
    await received(s, 1, 1);
    // Told once: nothing is left to sweep, nothing waits in the queues.
    expect(await s.h.reference.plugin.sessionExpiry.sweep()).to.equal(0);
    await settled(s.h);
    expect(s.ssf.pushed).to.have.length(1);
    const set = await verifySet(s.ssf.pushed[0]!.set, s.metadata, 'exp-site');
    expect([set.type, set.event.initiating_entity, set.event.reason_user]).to.deep.equal([`${CAEP}/session-revoked`, 'policy', { en: 'Your session expired.' }]);
    expect(s.bcl.tokens).to.have.length(1);
    expect(await s.bcl.verify(s.bcl.tokens[0]!, s.h.issuer, 'exp-site')).to.include({ sub: tokens.claims()!.sub, sid: tokens.claims()!.sid });
  });
});
