/** The scenarios, and one bounded load of a server (wrk when installed, else autocannon) with what the server did meanwhile. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuPlan, cpuTimeUs, processTree, runCommand, treeCpuTimeUs, type ServerProcess } from './processes';
import { PeakRss } from './memory';
import { BENCH_METRICS_TOKEN } from './project';

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
  const metrics = await scrapeMetrics(server);
  return metrics && loopDelayIn(metrics);
}

/** The event-loop delay in one read of /metrics (see `eventLoopDelay`). */
export function loopDelayIn(metrics: (name: string) => number): EventLoopDelay | undefined {
  const read = (name: string): number => Math.max(0, metrics(`nodejs_eventloop_lag_${name}_seconds`) * 1000 - LOOP_MONITOR_INTERVAL_MS);
  const delay = { meanMs: read('mean'), p50Ms: read('p50'), p99Ms: read('p99'), maxMs: read('max') };
  return Object.values(delay).every(Number.isFinite) ? delay : undefined;
}

/**
 * One read of a project server's /metrics (started with the bench's metrics
 * token): a lookup of a metric's value (its first sample, or the first whose
 * labels contain `labels`; NaN when absent),
 * or undefined when the server has no token or did not answer.
 *
 * @example const metrics = await scrapeMetrics(server); metrics?.('nodejs_heap_size_used_bytes')
 */
export async function scrapeMetrics(server: ServerProcess): Promise<((name: string, labels?: string) => number) | undefined> {
  if (server.spec.env.METRICS_TOKEN !== BENCH_METRICS_TOKEN) return undefined;
  try {
    const response = await fetch(`${server.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` },
      signal: AbortSignal.timeout(5_000),
    });
    const text = await response.text();
    /** `text` as the source of a regular expression that matches it literally. */
    const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return (name, labels) =>
      Number(new RegExp(`^${literal(name)}${labels === undefined ? '(?:\\{[^}]*\\})?' : `\\{[^}]*${literal(labels)}[^}]*\\}`} (\\S+)`, 'm').exec(text)?.[1]);
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
  const result = cpuPlan.wrk
    ? await loadWithWrk(server, scenario, key, seconds, connections)
    : await loadWithAutocannon(server, scenario, key, seconds, connections);
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
  writeFileSync(file, `${lines.join('\n')}\n`);
  wrkScripts.set(cacheKey, file);
  return file;
}

async function loadWithWrk(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
  const memory = new PeakRss(server.pid);
  const wrkArgs = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', wrkScript(scenario, key), server.baseUrl + scenario.path];
  let stdout: string;
  try {
    stdout = await runCommand(
      cpuPlan.loader === undefined ? 'wrk' : 'taskset',
      cpuPlan.loader === undefined ? wrkArgs : ['-c', String(cpuPlan.loader), 'wrk', ...wrkArgs],
      { timeoutMs: (seconds + 30) * 1000 },
    );
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
          requests: result.requests.total,
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
