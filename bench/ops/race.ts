/**
 * The refresh race: `concurrency` refreshes with one refresh token at once,
 * `trials` times, on each server. What a token family looks like after it:
 *
 * - "one winner, chain dead": one rotation went through, the others were
 *   refused as reuse and the grant was revoked (the new refresh token is
 *   dead too): strict rotation with reuse detection.
 * - "one answer, given again": every request got the same answer (the
 *   plugin's reuse leeway, docs/reuse-leeway.md); one
 *   live token family, no theft signal since the requests are one client's.
 * - "several live families": more than one rotation went through and their
 *   refresh tokens still work: the race the adapter lost (KNOWN-TRAPS item 2).
 */
import { HTTP_OPS } from './oauth.ts';

export interface RaceResult {
  trials: number;
  concurrency: number;
  /** Trials with exactly one winner and the chain dead afterwards. */
  oneWinnerChainDead: number;
  /** Trials where every request got the one answer (reuse leeway): one live family. */
  oneAnswerAgain: number;
  /** Trials that left more than one live token family. */
  severalLive: number;
  /** Anything else (e.g. one family left alive while reuse was refused). */
  other: number;
  /** Distinct refresh tokens handed out per trial, mean. */
  familiesMean: number;
  /** Race-free trials: one winner (chain dead or answer given again), nothing else alive. */
  raceFree: number;
}

export async function refreshRace(url: string, tokens: string[], concurrency: number): Promise<RaceResult> {
  const op = HTTP_OPS.refresh;
  const post = async (token: string) => {
    const res = await fetch(url + op.path, { method: 'POST', headers: op.headers, body: op.body(token) });
    return { status: res.status, body: await res.json().catch(() => ({})) as { refresh_token?: string; error?: string } };
  };
  const out: RaceResult = { trials: tokens.length, concurrency, oneWinnerChainDead: 0, oneAnswerAgain: 0, severalLive: 0, other: 0, familiesMean: 0, raceFree: 0 };
  let families = 0;
  for (const token of tokens) {
    const answers = await Promise.all(Array.from({ length: concurrency }, () => post(token)));
    const issued = [...new Set(answers.filter((a) => a.status === 200 && a.body.refresh_token).map((a) => a.body.refresh_token!))];
    families += issued.length;
    // Which of the handed-out refresh tokens still work (one more refresh each, one at a time).
    let live = 0;
    for (const t of issued) if ((await post(t)).status === 200) live += 1;
    const refused = answers.filter((a) => a.status === 400 && a.body.error === 'invalid_grant').length;
    if (issued.length === 1 && live === 0 && refused === concurrency - 1) out.oneWinnerChainDead += 1;
    else if (issued.length === 1 && live === 1 && refused === 0) out.oneAnswerAgain += 1;
    else if (live > 1) out.severalLive += 1;
    else out.other += 1;
  }
  out.familiesMean = families / tokens.length;
  out.raceFree = out.oneWinnerChainDead + out.oneAnswerAgain;
  return out;
}
