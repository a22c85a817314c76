/**
 * The scripts' replies, decoded in one place: each Lua script answers a
 * positional array (what Redis' Lua-to-RESP conversion can carry); these
 * turn them into named fields, so no caller reads a reply by position.
 * The layouts are the scripts' headers (lua/<name>.lua).
 */
import type { ScriptReply } from './scripts.ts';

/** An "ended before" mark as HMGET answers it, or nil where the script did not read it. */
type MarkReply = (string | null)[] | null | undefined;

/** token_read.lua: one JSON text, the records parsed with it. */
export interface TokenRead {
  payload: Record<string, unknown>;
  consumedAt: string | null;
  session: Record<string, unknown> | null;
  grant: Record<string, unknown> | null;
  /** The kept answer of the rotation that consumed this record (reuse leeway). */
  answer: string | null;
  /** That rotation recorded its new tokens as never written. */
  unwritten: boolean;
  siteMark: MarkReply;
  personMark: MarkReply;
  /** When the session and the grant records were last written (ms), for the marks. */
  sessionWrittenAt: number | undefined;
  grantWrittenAt: number | undefined;
}

const writtenAt = (t: string | null | undefined) => (t == null ? undefined : Number(t));

type TokenReadText = [Record<string, unknown>, string | null, Record<string, unknown> | null, Record<string, unknown> | null, string | null, boolean, MarkReply, MarkReply, string | null, string | null];

export function decodeTokenRead(reply: ScriptReply): TokenRead | undefined {
  if (typeof reply !== 'string') return undefined;
  const [payload, consumedAt, session, grant, answer, unwritten, siteMark, personMark, sessionT, grantT] = JSON.parse(reply) as TokenReadText;
  return { payload, consumedAt, session, grant, answer, unwritten, siteMark, personMark, sessionWrittenAt: writtenAt(sessionT), grantWrittenAt: writtenAt(grantT) };
}

/** record_read.lua */
export interface RecordRead {
  payload: string;
  consumedAt: string | null;
  siteMark: MarkReply;
  personMark: MarkReply;
  /** When the record was last written (ms), where it keeps that (grants, sessions). */
  writtenAt: number | undefined;
}

export function decodeRecordRead(reply: ScriptReply): RecordRead | undefined {
  const [p, c, site, person, t] = reply as [string?, string?, MarkReply?, MarkReply?, string?];
  return p == null ? undefined : { payload: p, consumedAt: c ?? null, siteMark: site, personMark: person, writtenAt: writtenAt(t) };
}

/** consume.lua and token_batch.lua */
export type ConsumeOutcome =
  | { outcome: 'consumed' }
  | { outcome: 'gone' }
  /** Consumed already: the record's payload, and the kept answer of the use that consumed it, if any. */
  | { outcome: 'used'; payload: string; answer: string | null; unwritten: boolean };

export function decodeConsume(reply: ScriptReply): ConsumeOutcome {
  const [done, payload, answer, unwritten] = reply as [number, string?, string?, number?];
  if (done === 1) return { outcome: 'consumed' };
  if (done === -1) return { outcome: 'gone' };
  return { outcome: 'used', payload: payload!, answer: answer ?? null, unwritten: unwritten === 1 };
}

/** notify_client.lua (and notify.lua's first half) */
export type NotifySiteStep =
  | { step: 'replay'; answer: string }
  | { step: 'rate'; retryAfterMs: number }
  /** `accountId` '' when the sub names no one; `siteEnded` the site's "ended before" mark (ms, '0' none). */
  | { step: 'ok'; accountId: string; id: string; siteEnded: string };

/** notify_account.lua (and notify.lua's second half) */
export type NotifyPersonStep =
  | { outcome: 'not_connected' }
  | { outcome: 'rate'; retryAfterMs: number }
  | { outcome: 'skip'; reason: string }
  | { outcome: 'stored'; delivery: string };

export function decodeNotifySite(reply: ScriptReply): NotifySiteStep {
  const [step, value, id, ended] = reply as [string, string | number, string?, string?];
  if (step === 'replay') return { step, answer: value as string };
  if (step === 'rate') return { step, retryAfterMs: Number(value) };
  return { step: 'ok', accountId: value as string, id: id!, siteEnded: ended ?? '0' };
}

export function decodeNotifyPerson(reply: ScriptReply): NotifyPersonStep {
  const [outcome, detail] = reply as [string, string | number | undefined];
  if (outcome === 'rate') return { outcome, retryAfterMs: Number(detail) };
  if (outcome === 'skip') return { outcome, reason: String(detail) };
  if (outcome === 'stored') return { outcome, delivery: String(detail) };
  return { outcome: 'not_connected' };
}

/** notify.lua: both steps in one reply, `{ 'ok', accountId, id, <person step> }` once the site step passed with a person. */
export function decodeNotify(reply: ScriptReply): { site: NotifySiteStep; person?: NotifyPersonStep } {
  const parts = reply as ScriptReply[];
  if (parts[0] !== 'ok' || parts[1] === '') return { site: decodeNotifySite(reply) };
  return {
    site: { step: 'ok', accountId: parts[1] as string, id: parts[2] as string, siteEnded: '0' },
    person: decodeNotifyPerson(parts.slice(3)),
  };
}
