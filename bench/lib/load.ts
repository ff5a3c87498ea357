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
  /** The body of every request (a `walk` gives each request its own instead). */
  body?: string;
  /** Status every response must have. */
  status: number;
  /** A different body per request, for a write that succeeds once per resource (see `BodyWalk`). */
  walk?: BodyWalk;
  /**
   * Undoes in a server's database what the scenario's requests changed; the
   * phase calls it before each probe and each load of the scenario. A
   * scenario with one is measured only on servers that have a database.
   */
  reset?: (databaseFile: string) => void;
  /**
   * Fields of the answer each server assigns itself (an id, a timestamp):
   * compared by kind, not by value, when the servers' answers are checked
   * to be the same. Any other field must be equal.
   */
  assigned?: Record<string, 'id' | 'date-time'>;
  /** Headers its answer must carry, from the answer's body (e.g. a created resource's Location). */
  headers?: (body: Record<string, unknown>) => Record<string, string>;
}

/**
 * Request n's body is `prefix + (first + n mod count) + suffix`: ids walk
 * first..first+count-1, one per request over every connection, then start
 * again (where the answers would turn into 409s, which the run reports).
 *
 * n goes on from one load to the next (`walkPosition`), never back to 0: when
 * a load ends, the server still answers the requests it had received, after
 * the bench has restored the pets for the next load; those late orders take
 * pets the next load, starting again at `first`, would meet as 409s.
 */
export interface BodyWalk {
  prefix: string;
  suffix: string;
  first: number;
  count: number;
}

/** The body a request sends: the scenario's, or request `n`'s of its walk. */
export const bodyOf = (scenario: Scenario, n = 0): string | undefined =>
  scenario.walk ? `${scenario.walk.prefix}${scenario.walk.first + (n % scenario.walk.count)}${scenario.walk.suffix}` : scenario.body;

/** Per walk, the n of the next load's first request (see `BodyWalk`). */
const walkPosition = new Map<BodyWalk, number>();

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
    assigned: { id: 'id' },
  },
} satisfies Record<string, Scenario>;

/**
 * placeOrder (`POST /v2/store/orders`): each request orders another of the
 * pets first..first+count-1, which the bench seeded available, so every
 * request is the successful path (order placed, pet pending, 201) and none
 * a 409 for a pet an earlier request took. `reset` makes them available
 * again before each load (`resetOrders`), so each server starts from the
 * same table; `count` must exceed what one load can send (`ORDERS_PER_SECOND_CEILING`).
 */
export function placeOrderScenario(orderable: { first: number; count: number }, reset: (databaseFile: string) => void): Scenario {
  return {
    id: 'placeOrder',
    label: 'placeOrder POST /v2/store/orders',
    method: 'POST',
    path: '/v2/store/orders',
    status: 201,
    walk: { prefix: '{"petId":', suffix: '}', ...orderable },
    reset,
    assigned: { id: 'id', createdAt: 'date-time', updatedAt: 'date-time' },
    headers: (order) => ({ location: `/v2/store/orders/${String(order.id)}`, etag: '"1"' }),
  };
}

/**
 * How many orders a second no server here comes near (one core places a few
 * thousand): placeOrder's pets are this times the longest load, so a load
 * never runs out of available pets. If one ever does, its requests meet
 * pets it already took (409) and the run reports them as an error.
 */
export const ORDERS_PER_SECOND_CEILING = 25_000;

export const requestHeaders = (key: string, scenario: Scenario): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  ...(bodyOf(scenario) === undefined ? {} : { 'content-type': 'application/json' }),
});

/**
 * One request, to check that a server answers a scenario as expected before
 * loading it: its status, the headers the scenario expects, its body
 * (returned; a walk's first body is sent).
 */
export async function probe(server: ServerProcess, scenario: Scenario, key: string): Promise<unknown> {
  const body = bodyOf(scenario);
  const response = await fetch(server.baseUrl + scenario.path, {
    method: scenario.method,
    headers: requestHeaders(key, scenario),
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  if (response.status !== scenario.status) {
    throw new Error(`${server.spec.label}, ${scenario.label}: expected ${scenario.status}, got ${response.status}: ${text.slice(0, 300)}`);
  }
  const answer = JSON.parse(text) as unknown;
  for (const [name, value] of Object.entries(scenario.headers?.(answer as Record<string, unknown>) ?? {})) {
    if (response.headers.get(name) !== value) {
      throw new Error(`${server.spec.label}, ${scenario.label}: expected ${name}: ${value}, got ${response.headers.get(name) ?? 'none'}`);
    }
  }
  return answer;
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

/**
 * wrk's Lua script for a scenario: method, headers and body, and a JSON
 * summary at the end. A walk builds each request in `request()` and counts
 * the answers per status in `response()` (wrk itself counts only those
 * outside 2xx/3xx, and a 409 must be told from a 201); other scenarios keep
 * wrk's prebuilt request and leave answers unparsed, which is cheaper.
 */
function wrkScript(scenario: Scenario, key: string): string {
  const cacheKey = `${scenario.id}|${key}`;
  let file = wrkScripts.get(cacheKey);
  if (file) return file;
  const quote = (text: string): string => JSON.stringify(text); // a JSON string is a valid Lua string here (ASCII, no \u escapes)
  const walk = scenario.walk;
  const lines = [
    `wrk.method = ${quote(scenario.method)}`,
    ...Object.entries(requestHeaders(key, scenario)).map(([name, value]) => `wrk.headers[${quote(name)}] = ${quote(value)}`),
    ...(scenario.body === undefined || walk ? [] : [`wrk.body = ${quote(scenario.body)}`]),
    ...(walk
      ? [
          // One thread (-t1): its one Lua state numbers every request of every connection.
          `local first, count, n = ${walk.first}, ${walk.count}, 0`,
          // The walk's position: the script's argument (`wrk ... -- N`).
          'init = function(args) n = tonumber(args[1]) or 0 end',
          'request = function()',
          '  local id = first + n % count',
          '  n = n + 1',
          `  return wrk.format(nil, nil, nil, ${quote(walk.prefix)} .. string.format("%d", id) .. ${quote(walk.suffix)})`,
          'end',
          'statuses = {}',
          'response = function(status, headers, body)',
          '  statuses[status] = (statuses[status] or 0) + 1',
          'end',
          'local threads = {}',
          'setup = function(thread) table.insert(threads, thread) end',
        ]
      : []),
    'done = function(summary, latency, requests)',
    ...(walk
      ? [
          '  local total, counted = {}, {}',
          '  for _, thread in ipairs(threads) do',
          '    for status, number in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + number end',
          '  end',
          '  for status, number in pairs(total) do counted[#counted + 1] = string.format(\'"%d":%d\', status, number) end',
          "  io.write('WRK_STATUSES {' .. table.concat(counted, ',') .. '}\\n')",
        ]
      : []),
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
  const start = scenario.walk ? (walkPosition.get(scenario.walk) ?? 0) : 0;
  const wrkArgs = [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--timeout',
    '10s',
    '-s',
    wrkScript(scenario, key),
    server.baseUrl + scenario.path,
    ...(scenario.walk ? ['--', String(start)] : []),
  ];
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
  // wrk tells the answers, not the requests sent: at most one more per connection was on its way (and a reconnection's).
  if (scenario.walk) walkPosition.set(scenario.walk, start + summary.requests! + 2 * connections);
  // A walk's script counted every answer by status.
  const statusLine = stdout.split('\n').find((text) => text.startsWith('WRK_STATUSES '));
  const statuses = statusLine === undefined ? undefined : (JSON.parse(statusLine.slice('WRK_STATUSES '.length)) as Record<string, number>);
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
    // Without a walk, wrk counts answers outside 2xx/3xx only; the probe before loading checked the exact status.
    statusCodes: statuses ?? { [String(scenario.status)]: summary.requests! - wrongStatus, ...(wrongStatus ? { 'not 2xx/3xx': wrongStatus } : {}) },
    seconds: summary.durationUs! / 1e6,
  };
}

function loadWithAutocannon(server: ServerProcess, scenario: Scenario, key: string, seconds: number, connections: number): Promise<LoadResult> {
  const latencies = new Latencies();
  const memory = new PeakRss(server.pid);
  // A walk numbers the requests of every connection together: each gets the next body.
  let sent = scenario.walk ? (walkPosition.get(scenario.walk) ?? 0) : 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.baseUrl + scenario.path,
        method: scenario.method,
        headers: requestHeaders(key, scenario),
        ...(scenario.walk
          ? { requests: [{ method: scenario.method, path: scenario.path, setupRequest: (request) => ({ ...request, body: bodyOf(scenario, sent++)! }) }] }
          : scenario.body === undefined
            ? {}
            : { body: scenario.body }),
        connections,
        duration: seconds,
        timeout: 10,
      },
      (error, result) => {
        const peakRssMb = memory.stop();
        if (scenario.walk) walkPosition.set(scenario.walk, sent);
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
