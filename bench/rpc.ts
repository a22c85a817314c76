/**
 * A few lines of request/response over Node's IPC channel: the orchestrator
 * (bench/run.ts) asks a server process (bench/server-process.ts) to mint
 * tokens, read counters, start a profile, and so on. Typed by an API object
 * whose methods take one argument.
 */
import { fork, type ChildProcess } from 'node:child_process';

type Api = Record<string, (arg: never) => Promise<unknown>>;

interface Call { id: number; method: string; arg: unknown }
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export interface Remote<T extends Api> {
  call<K extends keyof T & string>(method: K, arg: Parameters<T[K]>[0]): Promise<Awaited<ReturnType<T[K]>>>;
  readonly pid: number;
  /** Resolves when the process says it is listening. */
  readonly ready: Promise<void>;
  /** Asks the process to stop (its `close` method), then waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Runs `entry` as a child process and returns a typed handle on its API.
 * `wrapper`: a command the process runs under (e.g. valgrind and its options,
 * bench/instructions.ts), given node and its options as its own arguments;
 * `cwd`: where it runs (files V8 writes there, such as its code log).
 */
export function spawnRemote<T extends Api>(entry: string, args: string[], env: NodeJS.ProcessEnv = {}, options: { wrapper?: string[]; cwd?: string } = {}): Remote<T> {
  const { wrapper, cwd } = options;
  const child: ChildProcess = fork(entry, args, {
    env: { ...process.env, ...env },
    ...(wrapper ? { execPath: wrapper[0], execArgv: [...wrapper.slice(1), process.execPath, ...process.execArgv] } : {}),
    ...(cwd ? { cwd } : {}),
    // The child's stdout goes to our stderr: our stdout carries the report only.
    stdio: ['ignore', process.stderr, 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  let next = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean }) => { if (message.ready) resolve(); });
    child.once('exit', (code) => reject(new Error(`server process exited before it was ready (${code})`)));
  });
  ready.catch(() => {});
  child.on('message', (message: Reply) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(new Error(message.error));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server process ${child.pid} exited (${code ?? signal})`));
    pending.clear();
  });

  return {
    pid: child.pid!,
    ready,
    call(method, arg) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, method, arg } satisfies Call);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        await this.call('close' as keyof T & string, undefined as never);
      } catch {
        // it may exit before answering
      }
      await exited;
      clearTimeout(timer);
    },
  };
}

/** In the child: answers calls with the API's methods. */
export function serve(api: Api): void {
  process.on('message', (message: Call) => {
    const method = api[message.method];
    const reply = (r: Reply) => process.send!(r);
    if (!method) {
      reply({ id: message.id, ok: false, error: `unknown method ${message.method}` });
      return;
    }
    method(message.arg as never).then(
      (value) => reply({ id: message.id, ok: true, value }),
      (err: unknown) => reply({ id: message.id, ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) }),
    );
  });
}

/** This process' CPU time so far, µs: what a served process reports as its `cpuMicros`. */
export function processCpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}
