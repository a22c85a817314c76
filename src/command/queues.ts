import type { QueueCount } from '../queue/counts.ts';
import { EXIT } from './args.ts';
import type { HostModule } from './host-module.ts';
import { n, type Output } from './output.ts';

const NAMES = { letters: 'letters', logouts: 'back-channel logouts', sharedSignals: 'Shared Signals', sessionExpiry: 'session expiry' } as const;
const COLUMNS = ['waiting', 'active', 'delayed', 'failed'] as const;

/** `queues`: plugin.queues(), as a table or a document. */
export async function queuesCommand(host: HostModule, out: Output): Promise<number> {
  const queues = await host.plugin.queues();
  const row = (name: string, cells: string[]) => `${name.padEnd(22)}${cells.map((c) => c.padStart(9)).join('')}  `;
  const oldest = (q: QueueCount) => (q.oldestWaitingSeconds === null ? '-' : `${n(q.oldestWaitingSeconds)} s`);
  const text = [
    `${row('queue', [...COLUMNS])}oldest waiting`,
    ...Object.entries(NAMES).map(([of, name]) => {
      const q = queues[of as keyof typeof NAMES];
      return `${row(name, COLUMNS.map((c) => n(q[c])))}${oldest(q)}`;
    }),
  ].join('\n');
  out.result({ command: 'queues', queues }, text);
  return EXIT.done;
}
