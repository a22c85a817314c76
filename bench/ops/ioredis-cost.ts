/**
 * What one Redis command costs the Node process that sends it (ioredis:
 * command object, encoding, the socket write, reply parsing, promises), in CPU
 * µs on this machine. A pays this for every command of a request; B pays
 * nothing. Measured in this process with HMGETs of a token-sized record, one
 * at a time per lane, or two at once per lane (as the adapter reads a token's
 * session and grant), with and without ioredis' enableAutoPipelining.
 */
import { Redis } from 'ioredis';

export interface IoredisCost {
  mode: string;
  autoPipelining: boolean;
  commands: number;
  /** CPU of this process per command, µs. */
  cpuMicros: number;
  commandsPerSecond: number;
}

export async function ioredisCost(url: string, prefix: string, commands: number): Promise<IoredisCost[]> {
  const out: IoredisCost[] = [];
  const key = `${prefix}ioredis-probe`;
  for (const autoPipelining of [false, true]) {
    const client = new Redis(url, { enableAutoPipelining: autoPipelining });
    await client.hset(key, 'p', JSON.stringify({ payload: 'x'.repeat(420) }));
    for (const [mode, perStep] of [['one command at a time', 1], ['two at once (same tick)', 2]] as const) {
      const lanes = 10;
      const run = async (total: number) => {
        let left = total;
        await Promise.all(Array.from({ length: lanes }, async () => {
          while (left > 0) {
            left -= perStep;
            await Promise.all(Array.from({ length: perStep }, () => client.hmget(key, 'p', 'c')));
          }
        }));
      };
      await run(2000);
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      await run(commands);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const used = process.cpuUsage(cpu);
      out.push({ mode, autoPipelining, commands, cpuMicros: (used.user + used.system) / commands, commandsPerSecond: commands / seconds });
    }
    await client.del(key);
    await client.quit();
  }
  return out;
}
