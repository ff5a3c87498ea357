/**
 * The servers under test as child processes on free 127.0.0.1 ports, where
 * they and the load generator run (CPU pinning), and their CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import os from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const HOST = '127.0.0.1';

// ---------------------------------------------------------------- processes

/** Runs a command to completion; rejects with its stderr when it fails. */
export function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; inheritOutput?: boolean; timeoutMs?: number; cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', options.inheritOutput ? 'inherit' : 'pipe', options.inheritOutput ? 'inherit' : 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${stderr.trim()}`));
    });
  });
}

/** A free TCP port on 127.0.0.1 (bound then released; the child binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const live = new Set<ServerProcess>();

/**
 * The Node that runs every server under test: the project's pinned Node (the
 * one running the bench) unless `npm run bench -- --node <path>` names another.
 */
export const serverRuntime = { node: process.execPath, version: process.version };

/** Runs the servers under test on the Node at `node` (checked to start), and records its version. */
export async function useServerNode(node: string): Promise<void> {
  serverRuntime.node = node;
  serverRuntime.version = (await runCommand(node, ['-p', 'process.version'])).trim();
}

export interface ServerSpec {
  /** Short id used in the results, e.g. `A`, `project`. */
  id: string;
  label: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /**
   * Where the server's stdout (its log) goes: appended to a file, as
   * `npm start >> app.log` does; or a pipe this process drains, as a
   * container runtime does. Kept in memory (last lines) by default.
   */
  stdout?: { file: string } | 'drained-pipe';
  /** Free to use every CPU (WORKERS=N), instead of the server's CPU of `cpuPlan`. */
  unpinned?: boolean;
}

/** A server under test, in its own process. */
export class ServerProcess {
  readonly output: string[] = [];
  exited: string | undefined;
  /** The end of a stdout sent to a file or a drained pipe (for error messages). */
  stdoutTail: () => string = () => '';

  private constructor(
    readonly spec: ServerSpec,
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  get baseUrl(): string {
    return `http://${HOST}:${this.port}`;
  }

  /** Starts `node ...spec.args` with PORT/HOST set and waits until GET /healthz answers 200. */
  static async start(spec: ServerSpec): Promise<ServerProcess> {
    const port = await freePort();
    const [command, args] =
      cpuPlan.server === undefined || spec.unpinned
        ? [serverRuntime.node, spec.args]
        : ['taskset', ['-c', String(cpuPlan.server), serverRuntime.node, ...spec.args]];
    const logFile = typeof spec.stdout === 'object' ? openSync(spec.stdout.file, 'a') : undefined;
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...spec.env, PORT: String(port), HOST },
      stdio: ['ignore', logFile ?? 'pipe', 'pipe'],
    });
    if (logFile !== undefined) closeSync(logFile);
    const server = new ServerProcess(spec, child, port);
    live.add(server);
    const keep = (chunk: Buffer): void => {
      server.output.push(...chunk.toString().split('\n').filter(Boolean));
      if (server.output.length > 40) server.output.splice(0, server.output.length - 40);
    };
    // A drained pipe keeps only its last chunk: splitting every log line here would load this process.
    let lastChunk: Buffer | undefined;
    if (spec.stdout === 'drained-pipe') child.stdout!.on('data', (chunk: Buffer) => (lastChunk = chunk));
    else child.stdout?.on('data', keep);
    child.stderr!.on('data', keep);
    server.stdoutTail = () => (typeof spec.stdout === 'object' ? fileTail(spec.stdout.file) : (lastChunk?.toString() ?? ''));
    child.on('exit', (code, signal) => {
      server.exited = signal ?? `exit ${code}`;
      live.delete(server);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (server.exited) throw new Error(`${spec.label} exited while starting (${server.exited}):\n${server.diagnostics()}`);
      try {
        const response = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        await response.arrayBuffer();
        if (response.ok) return server;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`${spec.label} did not answer GET /healthz within 30 s:\n${server.diagnostics()}`);
      }
      await sleep(100);
    }
  }

  /** Throws when the process died (a crash under load is an error, not a figure). */
  assertAlive(): void {
    if (this.exited) throw new Error(`${this.spec.label} died (${this.exited}):\n${this.diagnostics()}`);
  }

  /** Its last output lines, for an error message. */
  diagnostics(): string {
    return [this.stdoutTail(), ...this.output].filter(Boolean).join('\n');
  }

  /** SIGTERM (graceful), SIGKILL after `graceMs`. Resolves once the process is gone. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }
}

/** The last few KB of a file. */
function fileTail(file: string, bytes = 4_096): string {
  try {
    const size = statSync(file).size;
    const fd = openSync(file, 'r');
    const buffer = Buffer.alloc(Math.min(bytes, size));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    closeSync(fd);
    return buffer.toString();
  } catch {
    return '';
  }
}

/** Kills every server still running (on an error or Ctrl-C). */
export function killAllServers(): void {
  for (const server of live) server.child.kill('SIGKILL');
}

// ---------------------------------------------------------------- CPUs and the load generator

const hasCommand = (command: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/**
 * Where things run: with two or more CPUs and `taskset`, every server under
 * test is pinned to CPU 0 and wrk (when installed) to CPU 1, so the server
 * has one core to itself and the load generator never competes with it.
 * Otherwise autocannon loads from this process, unpinned.
 */
export const cpuPlan: { server: number | undefined; loader: number | undefined; wrk: string | undefined } = (() => {
  const pin = os.cpus().length >= 2 && hasCommand('taskset');
  const wrk = hasCommand('wrk') ? 'wrk' : undefined;
  return { server: pin ? 0 : undefined, loader: pin && wrk ? 1 : undefined, wrk };
})();

/** Chooses the load generator: `autocannon` forces it even where wrk is installed. */
export function useLoader(loader: 'wrk' | 'autocannon' | undefined): void {
  if (loader === 'autocannon') {
    cpuPlan.wrk = undefined;
    cpuPlan.loader = undefined;
  } else if (loader === 'wrk' && !cpuPlan.wrk) throw new Error('--loader wrk: wrk is not installed (apt-get install wrk)');
}

export const loaderLabel = (): string =>
  cpuPlan.wrk ? `wrk (1 thread${cpuPlan.loader === undefined ? '' : `, CPU ${cpuPlan.loader}`})` : 'autocannon (in the bench process)';

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) a process has used so far, in µs (Linux /proc), or undefined. */
export function cpuTimeUs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3, utime 14 and stime 15 (proc(5)).
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** The process and its descendants (WORKERS=N: the primary and its workers), from /proc. */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let index = 0; index < pids.length; index++) {
    try {
      const tasks = readdirSync(`/proc/${pids[index]}/task`);
      for (const task of tasks) {
        const children = readFileSync(`/proc/${pids[index]}/task/${task}/children`, 'utf8').trim();
        if (children) pids.push(...children.split(' ').map(Number));
      }
    } catch {
      // gone, or no /proc
    }
  }
  return pids;
}

/**
 * CPU time of a process and its live descendants, in µs. A worker that died
 * during a load takes its time with it: the figure is then a lower bound.
 */
export function treeCpuTimeUs(pid: number): number | undefined {
  const times = processTree(pid).map(cpuTimeUs);
  return times[0] === undefined ? undefined : times.reduce<number>((sum, time) => sum + (time ?? 0), 0);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
