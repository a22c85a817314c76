/**
 * The counting SMTP sink (./smtp-sink.ts) in a process of its own: the
 * letters the worker sends are taken there, not on the orchestrator's event
 * loop, where the load driver keeps the time requests are due.
 */
import { processCpuMicros, serve } from './rpc.ts';
import { startCountingSink } from './smtp-sink.ts';

export type SinkApi = {
  port(arg: undefined): Promise<number>;
  received(arg: undefined): Promise<number>;
  /** This process' CPU time so far, µs (as the server processes' `counters`). */
  cpuMicros(arg: undefined): Promise<number>;
  /** Resolves when `count` letters have arrived in all; rejects after `timeoutMs`. */
  waitFor(arg: { count: number; timeoutMs: number }): Promise<void>;
  close(arg: undefined): Promise<void>;
};

const sink = await startCountingSink();
const api: SinkApi = {
  port: async () => sink.port,
  received: async () => sink.received,
  cpuMicros: async () => processCpuMicros(),
  waitFor: ({ count, timeoutMs }) => sink.waitFor(count, timeoutMs),
  async close() {
    setImmediate(async () => {
      await sink.close();
      process.exit(0);
    });
  },
};
serve(api);
process.on('disconnect', () => process.exit(1));
process.send!({ ready: true });
