import { createCipheriv, createDecipheriv, hash } from 'node:crypto';

import { pooledRandomBytes } from '../src/random-pool.ts';

/**
 * A refresh's answer, sealed (AES-256-GCM) with a key only the refresh token
 * it consumed gives: its value is nowhere in Redis (the key name is another
 * hash of it), so the kept answer tells a reader of Redis nothing.
 */
function answerKey(refreshToken: string): Buffer {
  return hash('sha256', `oidc-signout-notify refresh answer\0${refreshToken}`, 'buffer');
}

export function seal(answer: object, refreshToken: string): string {
  const iv = pooledRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', answerKey(refreshToken), iv);
  const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(answer), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return sealed.toString('base64url');
}

export function open(sealed: string, refreshToken: string): Record<string, unknown> | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', answerKey(refreshToken), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
