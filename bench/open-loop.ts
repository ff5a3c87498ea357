/**
 * Latency at a fixed offered load (open loop). A closed loop of N connections
 * on a saturated core only shows the throughput again through Little's law
 * (p99 ≈ N / req/s); what a user sees at a normal load is measured by sending
 * requests at a set rate whatever the server does, here half of the capacity
 * the comparison measured. Debian has no wrk2 and autocannon's `overallRate`
 * bursts (see `openLoop`), so a small client process of the bench paces the
 * requests (bench/open-loop-client.mjs), pinned to the load generator's CPU.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import {
  cpuPlan,
  loopDelayIn,
  median,
  PeakRss,
  probe,
  requestHeaders,
  ROOT,
  scrapeMetrics,
  sleep,
  type EventLoopDelay,
  type Scenario,
  type ServerProcess,
} from './lib';

/**
 * How long the open loop runs for the bench's options: windows of at least
 * 10 s, after at least 10 s of warm-up (a fresh server's compiler is still at
 * work in its first seconds: a 2 s warm-up left a stall of about 100 ms at 3
 * to 4 s).
 */
export const openLoopTimes = (options: { duration: number; warmup: number }): { seconds: number; warmupSeconds: number } => ({
  seconds: Math.max(10, 2 * options.duration),
  warmupSeconds: Math.max(10, options.warmup),
});

/** One measured window of the open loop. */
export interface OpenLoopWindow {
  /** Requests per second answered: below the offered rate, the server (or the generator) fell behind. */
  achievedRps: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  requests: number;
  /** Responses with another status than the scenario's, socket errors and timeouts. */
  failures: number;
  peakRssMb: number | undefined;
  /** The server's event-loop delay over the window (project servers only). */
  eventLoopDelay: EventLoopDelay | undefined;
  /** Full (mark-compact) garbage collections of the server during the window, and their pauses in ms (project servers only). */
  majorGcs: { count: number; pauseMs: number } | undefined;
  /** How late the generator's own event loop ran (1 ms resolution): its pauses would show in every figure above, so they must stay well below them. */
  generatorLoopDelay: { p99Ms: number; maxMs: number };
}

/** Every window, and their medians (the max is the largest of any window). */
export type OpenLoopResult = Omit<OpenLoopWindow, 'majorGcs' | 'generatorLoopDelay'> & {
  /** Requests per second asked for. */
  offeredRps: number;
  windows: OpenLoopWindow[];
};

/**
 * Sends `rps` requests per second of one scenario: a warm-up at that rate,
 * then `rounds` windows of `seconds`, every response time recorded. The
 * requests go from bench/open-loop-client.mjs, a process of its own pinned
 * to the load generator's CPU: on a fixed schedule (the i-th at start + i /
 * rate) over a pool of keep-alive connections, each timed from when it was
 * due, so a request that waited for a free connection counts its wait (no
 * coordinated omission). autocannon's `overallRate` is not used: it sends
 * each second's quota as fast as it can and then waits, a burst at
 * saturation every second.
 *
 * @example const at50 = await openLoop(server, SCENARIOS.list20, key, { rps: capacity / 2, seconds: 10, warmupSeconds: 10, rounds: 3 });
 */
export async function openLoop(
  server: ServerProcess,
  scenario: Scenario,
  key: string,
  { rps, seconds, warmupSeconds, rounds, connections = 32 }: { rps: number; seconds: number; warmupSeconds: number; rounds: number; connections?: number },
): Promise<OpenLoopResult> {
  await probe(server, scenario, key);
  const rate = Math.max(1, Math.round(rps));
  const url = new URL(server.baseUrl);
  const settings = {
    host: url.hostname,
    port: Number(url.port),
    method: scenario.method,
    path: scenario.path,
    headers: requestHeaders(key, scenario),
    body: scenario.body,
    rate,
    seconds,
    warmupSeconds,
    connections,
    status: scenario.status,
  };
  const script = [path.join(ROOT, 'bench', 'open-loop-client.mjs'), JSON.stringify(settings)];
  const [command, args] = cpuPlan.loader === undefined ? [process.execPath, script] : ['taskset', ['-c', String(cpuPlan.loader), process.execPath, ...script]];
  const client = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: client.stdout! });
  const next = lineReader(lines, client);
  try {
    // The windows are framed by reads of /metrics on a connection of their own; the warm-up has one too, so
    // that the first window does not pay for the server's first sight of one (its optimized code is
    // deoptimized and recompiled when a request comes on a new connection after a warm-up on the same 32).
    const warmupRead = sleep((warmupSeconds * 1000) / 2).then(() => scrapeMetrics(server));
    if ((await next()) !== 'warm') throw new Error('the open-loop client did not finish its warm-up');
    await warmupRead;
    const windows: OpenLoopWindow[] = [];
    for (let round = 0; round < rounds; round++) {
      await sleep(200); // the previous answers out of the way
      // One read of /metrics before and one after: each read also resets the server's loop-delay histogram.
      const gcsBefore = majorGcs(await scrapeMetrics(server));
      const memory = new PeakRss(server.pid);
      client.stdin!.write('go\n');
      const result = JSON.parse(await next()) as ClientResult;
      const peakRssMb = memory.stop();
      const after = await scrapeMetrics(server);
      const gcsAfter = majorGcs(after);
      windows.push({
        achievedRps: result.answered / result.seconds,
        p50Ms: result.p50Ms ?? NaN,
        p99Ms: result.p99Ms ?? NaN,
        p999Ms: result.p999Ms ?? NaN,
        maxMs: result.maxMs ?? NaN,
        requests: result.answered + result.failures,
        failures: result.failures,
        peakRssMb,
        eventLoopDelay: after && loopDelayIn(after),
        majorGcs: gcsBefore && gcsAfter && { count: gcsAfter.count - gcsBefore.count, pauseMs: (gcsAfter.seconds - gcsBefore.seconds) * 1000 },
        generatorLoopDelay: result.generatorLoopDelay,
      });
    }
    const mid = (pick: (window: OpenLoopWindow) => number | undefined): number => median(windows.map(pick)) ?? NaN;
    const delays = windows.map((window) => window.eventLoopDelay);
    return {
      offeredRps: rate,
      achievedRps: mid((w) => w.achievedRps),
      p50Ms: mid((w) => w.p50Ms),
      p99Ms: mid((w) => w.p99Ms),
      p999Ms: mid((w) => w.p999Ms),
      maxMs: Math.max(...windows.map((w) => w.maxMs)),
      requests: windows.reduce((sum, w) => sum + w.requests, 0),
      failures: windows.reduce((sum, w) => sum + w.failures, 0),
      peakRssMb: Math.max(...windows.map((w) => w.peakRssMb ?? 0)) || undefined,
      eventLoopDelay: delays.every(Boolean)
        ? {
            meanMs: mid((w) => w.eventLoopDelay?.meanMs),
            p50Ms: mid((w) => w.eventLoopDelay?.p50Ms),
            p99Ms: mid((w) => w.eventLoopDelay?.p99Ms),
            maxMs: Math.max(...delays.map((d) => d!.maxMs)),
          }
        : undefined,
      windows,
    };
  } finally {
    client.stdin!.end();
    lines.close();
    client.kill();
  }
}

/** The server's full garbage collections so far in one read of its /metrics (prom-client's `nodejs_gc_duration_seconds{kind="major"}`), or undefined without one. */
function majorGcs(metrics: ((name: string, labels?: string) => number) | undefined): { count: number; seconds: number } | undefined {
  if (!metrics) return undefined;
  const count = metrics('nodejs_gc_duration_seconds_count', 'kind="major"');
  const seconds = metrics('nodejs_gc_duration_seconds_sum', 'kind="major"');
  // No series yet: no full collection so far.
  return Number.isFinite(count) && Number.isFinite(seconds) ? { count, seconds } : { count: 0, seconds: 0 };
}

/** What bench/open-loop-client.mjs prints at the end. */
interface ClientResult {
  answered: number;
  failures: number;
  seconds: number;
  p50Ms: number | null;
  p99Ms: number | null;
  p999Ms: number | null;
  maxMs: number | null;
  generatorLoopDelay: { p99Ms: number; maxMs: number };
}

/** The next line a child prints, or an error when it exits first. */
function lineReader(lines: readline.Interface, child: ChildProcess): () => Promise<string> {
  const queue: string[] = [];
  let waiting: { resolve: (line: string) => void; reject: (error: Error) => void } | undefined;
  lines.on('line', (line) => {
    if (waiting) {
      waiting.resolve(line);
      waiting = undefined;
    } else queue.push(line);
  });
  child.on('exit', (code, signal) => waiting?.reject(new Error(`the open-loop client exited (${signal ?? code})`)));
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve, reject) => (waiting = { resolve, reject })));
}
