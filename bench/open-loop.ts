/**
 * Latency at a fixed offered load (open loop). A closed loop of N connections
 * on a saturated core only shows the throughput again through Little's law
 * (p99 ≈ N / req/s); what a user sees at a normal load is measured by sending
 * requests at a set rate whatever the server does, here half of the capacity
 * the comparison measured. Debian has no wrk2 and autocannon's `overallRate`
 * bursts (see `paced`), so this process paces the requests itself, pinned to
 * the load generator's CPU.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { cpuPlan, eventLoopDelay, Latencies, PeakRss, probe, requestHeaders, runCommand, sleep, type EventLoopDelay, type Scenario, type ServerProcess } from './lib';

export interface OpenLoopResult {
  /** Requests per second asked for. */
  offeredRps: number;
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
  eventLoopDelay: EventLoopDelay | undefined;
}

/** Pins this process (every thread) to a CPU, or frees it; a no-op where the bench does not pin. */
async function pinSelf(cpus: string | undefined): Promise<void> {
  if (cpuPlan.loader === undefined) return;
  await runCommand('taskset', ['-a', '-p', '-c', cpus ?? `0-${Math.max(cpuPlan.loader, cpuPlan.server ?? 0)}`, String(process.pid)]);
}

/**
 * Sends `rps` requests per second of one scenario for `seconds`, after a
 * warm-up at the same rate, and records every response time.
 *
 * @example const at50 = await openLoop(server, SCENARIOS.list20, key, capacity / 2, 10, 2);
 */
export async function openLoop(server: ServerProcess, scenario: Scenario, key: string, rps: number, seconds: number, warmupSeconds: number, connections = 32): Promise<OpenLoopResult> {
  await probe(server, scenario, key);
  const rate = Math.max(1, Math.round(rps));
  await pinSelf(cpuPlan.loader === undefined ? undefined : String(cpuPlan.loader));
  try {
    if (warmupSeconds > 0) await paced(server, scenario, key, rate, warmupSeconds, connections, undefined);
    await sleep(200); // the warm-up's last answers out of the way
    await eventLoopDelay(server); // resets the server's histogram
    const latencies = new Latencies();
    const memory = new PeakRss(server.pid);
    const result = await paced(server, scenario, key, rate, seconds, connections, latencies);
    const peakRssMb = memory.stop();
    const { p50, p99, p999, max } = latencies.percentiles();
    return {
      offeredRps: rate,
      achievedRps: result.answered / result.seconds,
      p50Ms: p50,
      p99Ms: p99,
      p999Ms: p999,
      maxMs: max,
      requests: result.answered + result.failures,
      failures: result.failures,
      peakRssMb,
      eventLoopDelay: await eventLoopDelay(server),
    };
  } finally {
    await pinSelf(undefined);
  }
}

/** What one paced run saw. */
interface Paced {
  answered: number;
  /** Responses with another status than the scenario's, and transport errors. */
  failures: number;
  seconds: number;
}

/**
 * Sends requests on a fixed schedule (the i-th at start + i / rate) over a
 * pool of keep-alive connections, and times each from when it was due, so a
 * request that waited for a free connection counts its wait (no coordinated
 * omission). autocannon's `overallRate` is not used: it sends each second's
 * quota as fast as it can and then waits, a burst at saturation every second.
 */
async function paced(server: ServerProcess, scenario: Scenario, key: string, rate: number, seconds: number, connections: number, latencies: Latencies | undefined): Promise<Paced> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(server.baseUrl + scenario.path);
  const headers = { ...requestHeaders(key, scenario), ...(scenario.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(scenario.body)) }) };
  const total = Math.round(rate * seconds);
  let sent = 0;
  let settled = 0;
  let answered = 0;
  let failures = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const done = (): void => {
      settled += 1;
      if (settled === total) resolve();
    };
    const send = (dueAt: number): void => {
      const request = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: scenario.method, headers, agent }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode === scenario.status) {
            answered += 1;
            latencies?.add(performance.now() - dueAt);
          } else failures += 1;
          done();
        });
      });
      request.setTimeout(10_000, () => request.destroy(new Error('no answer within 10 s')));
      request.on('error', () => {
        failures += 1;
        done();
      });
      request.end(scenario.body);
    };
    // A timer every millisecond sends what has come due since the last tick.
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      while (sent < due) send(started + (sent++ * 1000) / rate);
      if (sent === total) clearInterval(tick);
    }, 1);
  });
  agent.destroy();
  return { answered, failures, seconds: (performance.now() - started) / 1000 };
}
