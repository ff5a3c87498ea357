import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * `npm run dev` in a copy of the project, driven as a person at a terminal
 * would: started as its own process group (a terminal's foreground job),
 * its output read as it comes, Ctrl-C sent as SIGINT to the whole group.
 * Used by test/dev.test.ts and bench/dev-loop.ts.
 */
export interface DevSession {
  readonly root: string;
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything printed so far (stdout and stderr, in arrival order). */
  output(): string;
  /** Where the output is now: pass it to `waitFor` to look only at what comes after. */
  mark(): number;
  /** Resolves with the first match of `pattern` in the output after `from`; rejects after `timeoutMs` or when npm exits. */
  waitFor(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<RegExpMatchArray>;
  /** Ctrl-C: SIGINT to the process group; resolves with how npm ended (SIGKILL to the group after `timeoutMs`). */
  interrupt(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The lines `npm run dev` printed itself (`DEV:`), the last `count`: the story without the access log. */
  devLines(count?: number): string;
  /** Last resort (a failed test): SIGKILL to the group and to every process left in the copy. */
  kill(): void;
}

/** A free TCP port on 127.0.0.1 (bound then released; the server binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether nothing listens on the port (it can be bound again). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Every process (but this one) whose working directory or command line is inside `root`, from /proc. */
export function processesIn(root: string): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // another user's process
      }
      if (command === '') continue; // a zombie being reaped
      if (cwd === root || cwd.startsWith(`${root}/`) || command.includes(root)) found.push({ pid, command });
    } catch {
      // exited while looking
    }
  }
  return found;
}

/**
 * Calls `probe` until it returns a value (not undefined), every `intervalMs`;
 * rejects after `timeoutMs` with `what` and the last value seen.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 60_000, intervalMs = 100, describe = () => '' }: { timeoutMs?: number; intervalMs?: number; describe?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}\n${describe()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The environment of `npm run dev` in a test: this one's, without its database/Redis choice or test settings. */
export function devEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _database, REDIS_URL: _redis, NODE_ENV: _env, JEST_WORKER_ID: _worker, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** Starts `npm run dev [-- args]` in `root` on `port` and waits for its "ready" line. */
export async function startDev(
  root: string,
  { args = [], env = {}, port, readyTimeoutMs = 120_000 }: { args?: string[]; env?: Record<string, string>; port: number; readyTimeoutMs?: number },
): Promise<DevSession> {
  const child = spawn('npm', ['run', 'dev', ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: root,
    env: devEnv({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, as a terminal's foreground job
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      output += `\n[npm run dev exited: code ${code}, signal ${signal}]\n`;
      for (const listener of listeners) listener();
      resolve({ code, signal });
    }),
  );
  const group = child.pid!;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-group, signal);
    } catch {
      // already gone
    }
  };

  const session: DevSession = {
    root,
    port,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    mark: () => output.length,
    waitFor(pattern, { from = 0, timeoutMs = 60_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const match = pattern.exec(output.slice(from));
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`npm run dev exited before printing ${pattern}:\n${output.slice(from)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${pattern} in the output of npm run dev; its own lines:\n${session.devLines()}\n\nthe end of its output:\n${output.slice(Math.max(from, output.length - 2000))}`,
            ),
          );
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async interrupt(timeoutMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) signalGroup('SIGINT');
      const timer = setTimeout(() => signalGroup('SIGKILL'), timeoutMs);
      const ended = await exited;
      clearTimeout(timer);
      return ended;
    },
    devLines(count = 40) {
      return output
        .split('\n')
        .filter(
          (line) =>
            /\] DEV: |^ {4}\S/.test(line) &&
            !/^ {4}(requestId|method|path|operation|status|durationMs|responseBytes|keyId|plan|ip|address|port|database|rateLimitStore|env|node|mock|signal|stubbed|mocked|version): /.test(
              line,
            ),
        )
        .slice(-count)
        .join('\n');
    },
    kill() {
      signalGroup('SIGKILL');
      for (const { pid } of processesIn(root)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    },
  };
  try {
    await session.waitFor(/DEV: ready in /, { timeoutMs: readyTimeoutMs });
  } catch (error) {
    session.kill();
    throw error;
  }
  return session;
}
