import type { Logger } from '../host.ts';
import { clientCredentialsTokens } from './credentials.ts';
import type { Store } from '../store/store.ts';
import { KeysUnavailable } from './keys.ts';
import type { PollConfig, UpstreamReceiver } from './receiver.ts';
import { claimOnce } from './scripts.ts';
import { SetRefused, SetReplayed } from './verify.ts';

const TIMEOUT_MS = 10_000;
/** Rounds of one cycle while the transmitter says more are available. */
const MAX_ROUNDS = 10;

/**
 * Polls each upstream that has `poll`, every `everyMs`, one instance at a
 * time (a lease in the store): fetches its SETs, gives each to the receiver
 * as a pushed one, and acknowledges it in the next request (`ack`), or
 * reports why not (`setErrs`, RFC 8936 section 2.4); a SET the receiver could
 * not act on (the store away, the keys unreachable) is neither, and comes
 * again.
 */
export function createUpstreamPoller(deps: { store: Store; logger: Logger; receiver: UpstreamReceiver; upstreams: { id: string; poll?: PollConfig | undefined }[] }) {
  const timers = new Map<string, NodeJS.Timeout>();
  const tokens = clientCredentialsTokens();
  const pending = new Map<string, { ack: string[]; setErrs: Record<string, { err: string; description: string }> }>();
  let running = false;

  /** One poll cycle of the upstream: true when it ran (this instance held the lease). */
  async function cycle(id: string, poll: PollConfig): Promise<boolean> {
    if ((await deps.store.run(claimOnce(), [deps.receiver.keys.poll(id)], [poll.everyMs])) !== 1) return false;
    const owed = pending.get(id) ?? { ack: [], setErrs: {} };
    pending.set(id, owed);
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const request = { maxEvents: 100, returnImmediately: true, ...(owed.ack.length > 0 ? { ack: owed.ack.slice(0, 100) } : {}), ...(Object.keys(owed.setErrs).length > 0 ? { setErrs: owed.setErrs } : {}) };
      const res = await fetch(poll.endpoint, {
        method: 'POST', redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${await tokens.get(poll)}` },
        body: JSON.stringify(request),
      });
      if (res.status === 401) tokens.forget(poll);
      if (!res.ok) throw new Error(`poll endpoint answered ${res.status}`);
      const answer = await res.json() as { sets?: unknown; moreAvailable?: unknown };
      // Told: what this request carried is off the list.
      owed.ack = owed.ack.slice(100);
      owed.setErrs = {};
      const sets = typeof answer.sets === 'object' && answer.sets !== null ? Object.entries(answer.sets as Record<string, unknown>) : [];
      for (const [jti, set] of sets.slice(0, 100)) {
        try {
          await deps.receiver.receive(id, typeof set === 'string' ? set : '');
          owed.ack.push(jti);
        } catch (err) {
          // Received already (another instance's poll, or a push): acted on, so acknowledged.
          if (err instanceof SetReplayed) owed.ack.push(jti);
          else if (err instanceof SetRefused) owed.setErrs[jti.slice(0, 64)] = { err: err.err, description: err.message.slice(0, 256) };
          else if (err instanceof KeysUnavailable) deps.logger.warn('upstream SET not verified: its keys cannot be had (polled again)', { upstream: id, reason: err.message });
          else throw err;
        }
      }
      if (answer.moreAvailable !== true) break;
    }
    return true;
  }

  return {
    cycle,
    start() {
      if (running) return;
      running = true;
      for (const { id, poll } of deps.upstreams) {
        if (!poll) continue;
        const tick = async () => {
          try {
            await cycle(id, poll);
          } catch (err) {
            deps.logger.warn('upstream poll failed (tried again at the next cycle)', { upstream: id, reason: (err as Error).message });
          }
          if (running) timers.set(id, setTimeout(tick, poll.everyMs).unref());
        };
        timers.set(id, setTimeout(tick, 0).unref());
      }
    },
    stop() {
      running = false;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
