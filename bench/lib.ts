/**
 * Building blocks of the benchmark: servers in child processes on free
 * 127.0.0.1 ports, their RSS from /proc, project databases with a key and
 * seeded pets, and one bounded autocannon load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { seedPets } from './seed';

export const ROOT = path.resolve(__dirname, '..');
export const HOST = '127.0.0.1';

// ---------------------------------------------------------------- processes

/** Runs a command to completion; rejects with its stderr when it fails. */
export function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; inheritOutput?: boolean; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
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
}

/** A server under test, in its own process. */
export class ServerProcess {
  readonly output: string[] = [];
  exited: string | undefined;

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
    const child = spawn(serverRuntime.node, spec.args, {
      cwd: ROOT,
      env: { ...spec.env, PORT: String(port), HOST },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(spec, child, port);
    live.add(server);
    const keep = (chunk: Buffer): void => {
      server.output.push(...chunk.toString().split('\n').filter(Boolean));
      if (server.output.length > 40) server.output.splice(0, server.output.length - 40);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code, signal) => {
      server.exited = signal ?? `exit ${code}`;
      live.delete(server);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (server.exited) throw new Error(`${spec.label} exited while starting (${server.exited}):\n${server.output.join('\n')}`);
      try {
        const response = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        await response.arrayBuffer();
        if (response.ok) return server;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`${spec.label} did not answer GET /healthz within 30 s:\n${server.output.join('\n')}`);
      }
      await sleep(100);
    }
  }

  /** Throws when the process died (a crash under load is an error, not a figure). */
  assertAlive(): void {
    if (this.exited) throw new Error(`${this.spec.label} died (${this.exited}):\n${this.output.join('\n')}`);
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

/** Kills every server still running (on an error or Ctrl-C). */
export function killAllServers(): void {
  for (const server of live) server.child.kill('SIGKILL');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- memory

function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size now, in MB (Linux /proc). */
export const rssMb = (pid: number): number | undefined => {
  const kb = procStatusKb(pid, 'VmRSS');
  return kb === undefined ? undefined : kb / 1024;
};

/**
 * Peak RSS of a process over an interval: the kernel's high-water mark
 * (VmHWM), reset at the start by writing 5 to /proc/PID/clear_refs, and, as a
 * cross-check and fallback, the largest VmRSS polled every 50 ms.
 */
export class PeakRss {
  private polledKb = 0;
  private hwmReset = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      this.hwmReset = true;
    } catch {
      this.hwmReset = false;
    }
    this.poll();
    this.timer = setInterval(() => this.poll(), 50);
  }

  private poll(): void {
    this.polledKb = Math.max(this.polledKb, procStatusKb(this.pid, 'VmRSS') ?? 0);
  }

  /** Peak in MB, or undefined where /proc is not available. */
  stop(): number | undefined {
    clearInterval(this.timer);
    this.poll();
    const hwm = this.hwmReset ? procStatusKb(this.pid, 'VmHWM') : undefined;
    const peakKb = Math.max(hwm ?? 0, this.polledKb);
    return peakKb > 0 ? peakKb / 1024 : undefined;
  }
}

// ---------------------------------------------------------------- the project

export interface ProjectDatabase {
  file: string;
  databaseUrl: string;
  key: string;
  pets: number;
  seedMs: number;
}

/**
 * A fresh SQLite file with an enterprise key whose limits are out of reach
 * (created, and the schema migrated, by the project's own keys CLI) and
 * `pets` pets inserted directly.
 */
export async function prepareProjectDatabase(directory: string, name: string, pets: number): Promise<ProjectDatabase> {
  const file = path.join(directory, `${name}.db`);
  const databaseUrl = `sqlite:${file}`;
  const stdout = await runCommand(
    process.execPath,
    ['--import', 'tsx', 'scripts/keys.ts', 'create', '--plan', 'enterprise', '--rpm', '100000000', '--rpd', '2000000000', '--label', 'bench'],
    { env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  const key = stdout.trim();
  if (!/^pas_[A-Za-z0-9_-]{43}$/.test(key)) throw new Error(`keys create printed no key: ${JSON.stringify(stdout)}`);
  const seedMs = seedPets(file, pets);
  return { file, databaseUrl, key, pets, seedMs };
}

/** The project's real server: compiled, production mode, warn-level logs. */
export function projectSpec(id: string, label: string, database: ProjectDatabase, nodeFlags: string[] = []): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', DATABASE_URL: database.databaseUrl };
  // The embedded setup: SQLite and in-memory counters, whatever this shell has set.
  delete env.VALIDATE_RESPONSES;
  delete env.REDIS_URL;
  delete env.NODE_OPTIONS;
  return { id, label, args: [...nodeFlags, 'dist/src/server.js'], env };
}

export function baselineSpec(id: string, label: string, script: string, petsFile: string): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_PETS_FILE: petsFile, NODE_ENV: 'production' };
  delete env.NODE_OPTIONS;
  return { id, label, args: [path.join('bench', 'servers', script)], env };
}

// ---------------------------------------------------------------- load

export interface Scenario {
  id: string;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Status every response must have. */
  status: number;
}

export const SCENARIOS = {
  list20: { id: 'list20', label: 'listPets limit=20', method: 'GET', path: '/v1/pets?limit=20', status: 200 },
  list100: { id: 'list100', label: 'listPets limit=100', method: 'GET', path: '/v1/pets?limit=100', status: 200 },
  get: { id: 'get', label: 'getPet /v1/pets/1', method: 'GET', path: '/v1/pets/1', status: 200 },
  create: {
    id: 'create',
    label: 'createPet POST /v1/pets',
    method: 'POST',
    path: '/v1/pets',
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    status: 201,
  },
} satisfies Record<string, Scenario>;

export const requestHeaders = (key: string, scenario: Scenario): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  ...(scenario.body === undefined ? {} : { 'content-type': 'application/json' }),
});

/** One request, to check that a server answers a scenario as expected before loading it. */
export async function probe(server: ServerProcess, scenario: Scenario, key: string): Promise<unknown> {
  const response = await fetch(server.baseUrl + scenario.path, {
    method: scenario.method,
    headers: requestHeaders(key, scenario),
    ...(scenario.body === undefined ? {} : { body: scenario.body }),
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  if (response.status !== scenario.status) {
    throw new Error(`${server.spec.label}, ${scenario.label}: expected ${scenario.status}, got ${response.status}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text);
}

/** Latencies of one load, in ms, at full resolution (autocannon's histogram keeps whole ms). */
class Latencies {
  private values = new Float64Array(1 << 16);
  private count = 0;

  add(ms: number): void {
    if (this.count === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.count++] = ms;
  }

  percentiles(): { p50: number; p99: number; max: number } {
    const sorted = this.values.subarray(0, this.count).sort();
    const at = (q: number): number => (this.count === 0 ? NaN : sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)]!);
    return { p50: at(0.5), p99: at(0.99), max: at(1) };
  }
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** autocannon's own whole-millisecond percentiles, kept as a cross-check. */
  autocannonP50Ms: number;
  autocannonP99Ms: number;
  requests: number;
  peakRssMb: number | undefined;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
}

/** Loads one server with one scenario for `seconds` over `connections` keep-alive connections. */
export function load(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
  server.assertAlive();
  const latencies = new Latencies();
  const memory = new PeakRss(server.pid);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.baseUrl + scenario.path,
        method: scenario.method,
        headers: requestHeaders(key, scenario),
        ...(scenario.body === undefined ? {} : { body: scenario.body }),
        connections,
        duration: seconds,
        timeout: 10,
      },
      (error, result) => {
        const peakRssMb = memory.stop();
        if (error) return reject(error);
        const { p50, p99, max } = latencies.percentiles();
        resolve({
          rps: result.requests.average,
          p50Ms: p50,
          p99Ms: p99,
          maxMs: max,
          autocannonP50Ms: result.latency.p50,
          autocannonP99Ms: result.latency.p99,
          requests: result.totalCompletedRequests,
          peakRssMb,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
          seconds: result.duration,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => latencies.add(responseTimeMs));
  });
}

/** Why a load's figures cannot be trusted (wrong statuses, socket errors), or undefined. */
export function loadProblem(result: LoadResult, scenario: Scenario): string | undefined {
  const wrong = Object.entries(result.statusCodes).filter(([code]) => Number(code) !== scenario.status);
  const problems = [
    ...(wrong.length ? [`unexpected statuses ${wrong.map(([code, count]) => `${code}×${count}`).join(', ')}`] : []),
    ...(result.errors ? [`${result.errors} errors (${result.timeouts} timeouts)`] : []),
    ...(result.requests === 0 ? ['no response at all'] : []),
  ];
  return problems.length ? problems.join('; ') : undefined;
}

// ---------------------------------------------------------------- statistics

export const median = (values: number[]): number => {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export const maxOf = (values: Array<number | undefined>): number | undefined => {
  const known = values.filter((value): value is number => value !== undefined && Number.isFinite(value));
  return known.length ? Math.max(...known) : undefined;
};
