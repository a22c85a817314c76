/**
 * The reference provider as an operator runs it: `node examples/start.ts`
 * in a process of its own, configured through the environment, with the
 * test's clients in a CONFIG_FILE of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { exportJWK, generateKeyPair } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { freePort } from './net.ts';
import { REDIS_CLUSTER, REDIS_URL } from './redis.ts';
import type { Harness } from './reference.ts';
import type { SmtpSink } from './smtp.ts';

const START = fileURLToPath(new URL('../../examples/start.ts', import.meta.url));

export interface Instance {
  child: ChildProcess;
  port: number;
  url: string;
  metricsPort: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** One signing key for every instance of a test (as a host shares its JWKS). */
export async function sharedJwks(): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), use: 'sig', alg: 'RS256', kid: 'test-shared' }] });
}

/**
 * The environment of a restartable service: the test's Redis (its Cluster in
 * the Cluster pass), a key prefix, an SMTP sink, keys shared by every
 * process, and sites on 127.0.0.1 allowed.
 */
export async function instanceEnv(prefix: string, smtp: SmtpSink): Promise<Record<string, string>> {
  return {
    REDIS_URL: REDIS_CLUSTER ? `redis+cluster://${REDIS_CLUSTER}` : REDIS_URL,
    KEY_PREFIX: prefix,
    SMTP_URL: smtp.url,
    JWKS: await sharedJwks(),
    ALLOW_PRIVATE_FETCH_HOSTS: '127.0.0.1',
  };
}

/** Starts `examples/start.ts` and resolves once it listens. `env` adds to or overrides the defaults. */
export async function startInstance(opts: { clients: ClientMetadata[]; issuer?: string; env: Record<string, string> }): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), 'osn-instance-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ clients: opts.clients }));
  const port = await freePort();
  const metricsPort = await freePort();
  let out = '';
  const child = spawn(process.execPath, [START], {
    env: {
      ...process.env,
      PORT: String(port),
      ISSUER: opts.issuer ?? `http://127.0.0.1:${port}`,
      CONFIG_FILE: configFile,
      COOKIE_KEYS: 'test-cookie-key-0123456789',
      METRICS_PORT: String(metricsPort),
      ALLOW_PRIVATE_FETCH_HOSTS: '',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    rmSync(dir, { recursive: true, force: true });
    resolve(code);
  }));
  const deadline = Date.now() + 20_000;
  while (!out.includes('Identity provider listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the instance did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child, port, metricsPort, exited,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** What the sign-in helpers need of a harness: where the service is and where its letters go. */
export function asHarness(issuer: string, smtp: SmtpSink): Harness {
  return { issuer, smtp } as Harness;
}
