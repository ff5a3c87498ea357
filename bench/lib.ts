/**
 * Building blocks of the benchmark: servers in child processes on free
 * 127.0.0.1 ports, their RSS from /proc, project databases with a key and
 * seeded pets, and one bounded autocannon load.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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
    const [command, args] = cpuPlan.server === undefined || spec.unpinned ? [serverRuntime.node, spec.args] : ['taskset', ['-c', String(cpuPlan.server), serverRuntime.node, ...spec.args]];
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
  cpuPlan.wrk
    ? `wrk (1 thread${cpuPlan.loader === undefined ? '' : `, CPU ${cpuPlan.loader}`})`
    : 'autocannon (in the bench process)';

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
      for (const member of processTree(pid)) writeFileSync(`/proc/${member}/clear_refs`, '5');
      this.hwmReset = true;
    } catch {
      this.hwmReset = false;
    }
    this.poll();
    this.timer = setInterval(() => this.poll(), 50);
  }

  /** Of the process and its workers together (WORKERS=N). */
  private poll(): void {
    const total = processTree(this.pid).reduce((sum, member) => sum + (procStatusKb(member, 'VmRSS') ?? 0), 0);
    this.polledKb = Math.max(this.polledKb, total);
  }

  stopIfRunning(): void {
    clearInterval(this.timer);
  }

  /** Peak in MB, or undefined where /proc is not available. */
  stop(): number | undefined {
    clearInterval(this.timer);
    this.poll();
    const hwm = this.hwmReset ? processTree(this.pid).reduce((sum, member) => sum + (procStatusKb(member, 'VmHWM') ?? 0), 0) : undefined;
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
export async function prepareProjectDatabase(directory: string, name: string, pets: number, projectRoot = ROOT): Promise<ProjectDatabase> {
  const file = path.join(directory, `${name}.db`);
  const databaseUrl = `sqlite:${file}`;
  const stdout = await runCommand(
    process.execPath,
    ['--import', 'tsx', path.join(projectRoot, 'scripts/keys.ts'), 'create', '--plan', 'enterprise', '--rpm', '100000000', '--rpd', '2000000000', '--label', 'bench'],
    { env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  const key = stdout.trim();
  if (!/^pas_[A-Za-z0-9_-]{43}$/.test(key)) throw new Error(`keys create printed no key: ${JSON.stringify(stdout)}`);
  const seedMs = seedPets(file, pets);
  return { file, databaseUrl, key, pets, seedMs };
}

/**
 * The Node flags `npm start` gives the server: those of package.json's start
 * script (`--enable-source-maps`, ...), with `config.serverNodeFlags` in place.
 */
export const SERVER_NODE_FLAGS: string[] = startScriptFlags();

function startScriptFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string }; config?: { serverNodeFlags?: string } };
  const flags = /\bnode ([^&]*?)\s*dist\/src\/server\.js/.exec(manifest.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json: the start script does not run "node ... dist/src/server.js": ${manifest.scripts.start}`);
  return flags.replaceAll('$npm_package_config_serverNodeFlags', manifest.config?.serverNodeFlags ?? '').split(' ').filter(Boolean);
}

/** Variables of this shell that would change what the server does; a user's `npm start` has none of them. */
const PROJECT_VARIABLES = ['LOG_LEVEL', 'LOG_FORMAT', 'VALIDATE_RESPONSES', 'REDIS_URL', 'WORKERS', 'METRICS_TOKEN', 'NODE_OPTIONS', 'OPENAPI_DIR'];

/** A token for GET /metrics, so the bench can read the server's event-loop delay; no request path reads it. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';

/**
 * The project's real server as it ships: compiled, `NODE_ENV=production` and
 * nothing else (info-level access log on, the default response sampling), the
 * Node flags of `npm start`, its log appended to `<database>.log` unless
 * `options.stdout` says otherwise. `options.env` adds variables (a scenario
 * such as `LOG_LEVEL=warn`).
 */
export function projectSpec(
  id: string,
  label: string,
  database: ProjectDatabase,
  nodeFlags: string[] = SERVER_NODE_FLAGS,
  projectRoot = ROOT,
  options: { env?: NodeJS.ProcessEnv; stdout?: ServerSpec['stdout'] } = {},
): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of PROJECT_VARIABLES) delete env[name];
  Object.assign(env, { NODE_ENV: 'production', DATABASE_URL: database.databaseUrl, METRICS_TOKEN: BENCH_METRICS_TOKEN }, options.env);
  const stdout = options.stdout ?? { file: database.file.replace(/\.db$/, `.${id.replace(/[^\w.-]/g, '_')}.log`) };
  return { id, label, args: [...nodeFlags, path.join(path.relative(ROOT, projectRoot), 'dist/src/server.js')], env, stdout };
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
export class Latencies {
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

  percentiles(): { p50: number; p99: number; p999: number; max: number } {
    const sorted = this.values.subarray(0, this.count).sort();
    const at = (q: number): number => (this.count === 0 ? NaN : sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)]!);
    return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: at(1) };
  }
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  peakRssMb: number | undefined;
  /** Server CPU time (user + system, every process of it) per response, in µs: what a request costs, whatever the load generator does. */
  cpuUsPerRequest: number | undefined;
  /** With WORKERS=N: the primary's share of it (it holds every rate-limit count). */
  primaryCpuUsPerRequest?: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /** The server's event-loop delay over the load (perf_hooks.monitorEventLoopDelay, as its /metrics reports it), in ms. */
  eventLoopDelay?: EventLoopDelay;
}

export interface EventLoopDelay {
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * prom-client's loop monitor (`eventLoopMonitoringPrecision`, its default):
 * the histogram records the whole time between two runs of a timer of this
 * interval, so an idle loop reads this much. It is taken off every figure, so
 * what is reported is how late the timer ran: the delay a request saw.
 */
const LOOP_MONITOR_INTERVAL_MS = 10;

/**
 * Reads the event-loop delay the server measured since the previous read
 * (prom-client's `nodejs_eventloop_lag_*`, a perf_hooks.monitorEventLoopDelay
 * histogram it resets at every scrape). Only for the project's servers, which
 * the bench starts with a metrics token.
 */
export async function eventLoopDelay(server: ServerProcess): Promise<EventLoopDelay | undefined> {
  if (server.spec.env.METRICS_TOKEN !== BENCH_METRICS_TOKEN) return undefined;
  try {
    const response = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` }, signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    const read = (name: string): number =>
      Math.max(0, Number(new RegExp(`^nodejs_eventloop_lag_${name}_seconds(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1]) * 1000 - LOOP_MONITOR_INTERVAL_MS);
    const delay = { meanMs: read('mean'), p50Ms: read('p50'), p99Ms: read('p99'), maxMs: read('max') };
    return Object.values(delay).every(Number.isFinite) ? delay : undefined;
  } catch {
    return undefined;
  }
}

/** Loads one server with one scenario for `seconds` over `connections` keep-alive connections (wrk when installed). */
export async function load(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
  server.assertAlive();
  await eventLoopDelay(server); // resets the server's histogram
  const cpuBefore = treeCpuTimeUs(server.pid);
  const primaryBefore = cpuTimeUs(server.pid);
  const result = cpuPlan.wrk ? await loadWithWrk(server, scenario, key, seconds, connections) : await loadWithAutocannon(server, scenario, key, seconds, connections);
  const cpuAfter = treeCpuTimeUs(server.pid);
  const primaryAfter = cpuTimeUs(server.pid);
  result.cpuUsPerRequest = cpuBefore === undefined || cpuAfter === undefined || result.requests === 0 ? undefined : (cpuAfter - cpuBefore) / result.requests;
  if (processTree(server.pid).length > 1 && primaryBefore !== undefined && primaryAfter !== undefined && result.requests > 0) {
    result.primaryCpuUsPerRequest = (primaryAfter - primaryBefore) / result.requests;
  }
  const delay = await eventLoopDelay(server);
  if (delay) result.eventLoopDelay = delay;
  return result;
}

const wrkScripts = new Map<string, string>();

/** wrk's Lua script for a scenario: method, headers and body, and a JSON summary at the end. */
function wrkScript(scenario: Scenario, key: string): string {
  const cacheKey = `${scenario.id}|${key}`;
  let file = wrkScripts.get(cacheKey);
  if (file) return file;
  const quote = (text: string): string => JSON.stringify(text); // a JSON string is a valid Lua string here (ASCII, no \u escapes)
  const lines = [
    `wrk.method = ${quote(scenario.method)}`,
    ...Object.entries(requestHeaders(key, scenario)).map(([name, value]) => `wrk.headers[${quote(name)}] = ${quote(value)}`),
    ...(scenario.body === undefined ? [] : [`wrk.body = ${quote(scenario.body)}`]),
    'done = function(summary, latency, requests)',
    '  io.write(string.format(\'WRK_JSON {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\\n\',',
    '    summary.requests, summary.duration, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status,',
    '    summary.errors.timeout, latency:percentile(50), latency:percentile(99), latency.max))',
    'end',
  ];
  file = path.join(mkdtempSync(path.join(os.tmpdir(), 'pet-bench-wrk-')), `${scenario.id}.lua`);
  writeFileSync(file, lines.join('\n') + '\n');
  wrkScripts.set(cacheKey, file);
  return file;
}

async function loadWithWrk(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
  const memory = new PeakRss(server.pid);
  const wrkArgs = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', wrkScript(scenario, key), server.baseUrl + scenario.path];
  let stdout: string;
  try {
    stdout = await runCommand(cpuPlan.loader === undefined ? 'wrk' : 'taskset', cpuPlan.loader === undefined ? wrkArgs : ['-c', String(cpuPlan.loader), 'wrk', ...wrkArgs], { timeoutMs: (seconds + 30) * 1000 });
  } finally {
    memory.stopIfRunning();
  }
  const line = stdout.split('\n').find((text) => text.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  const summary = JSON.parse(line.slice('WRK_JSON '.length)) as Record<string, number>;
  const wrongStatus = summary.status!;
  const socketErrors = summary.connect! + summary.read! + summary.write! + summary.timeout!;
  return {
    rps: summary.requests! / (summary.durationUs! / 1e6),
    p50Ms: summary.p50Us! / 1000,
    p99Ms: summary.p99Us! / 1000,
    maxMs: summary.maxUs! / 1000,
    requests: summary.requests!,
    peakRssMb: memory.stop(),
    cpuUsPerRequest: undefined,
    errors: socketErrors,
    timeouts: summary.timeout!,
    // wrk counts answers outside 2xx/3xx only; the probe before loading checked the exact status.
    statusCodes: { [String(scenario.status)]: summary.requests! - wrongStatus, ...(wrongStatus ? { 'not 2xx/3xx': wrongStatus } : {}) },
    seconds: summary.durationUs! / 1e6,
  };
}

function loadWithAutocannon(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
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
          requests: result.totalCompletedRequests,
          peakRssMb,
          cpuUsPerRequest: undefined,
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

/** The median of the values measured (undefined and NaN are not measurements), or undefined when none was. */
export function median(values: Array<number | undefined>): number | undefined {
  const sorted = values.filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const maxOf = (values: Array<number | undefined>): number | undefined => {
  const known = values.filter((value): value is number => value !== undefined && Number.isFinite(value));
  return known.length ? Math.max(...known) : undefined;
};
