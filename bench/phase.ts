/** A phase of the benchmark: servers (contenders) measured on scenarios, round after round. */
import { isDeepStrictEqual } from 'node:util';
import { ServerProcess, load, loadProblem, maxOf, median, probe, rssMb, type LoadResult, type Scenario } from './lib';
import { fmt } from './report';

export interface Contender {
  server: ServerProcess;
  key: string;
  idleRssMb: number | undefined;
}

export interface Cell {
  server: string;
  scenario: string;
  rounds: LoadResult[];
  rps: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number | undefined;
  minRps: number;
  maxRps: number;
  /** Server CPU µs per request, median over rounds. */
  cpuUsPerRequest: number | undefined;
  /** The server's event-loop delay p99 and max (ms), median over rounds (the project's servers only). */
  loopDelayP99Ms: number | undefined;
  loopDelayMaxMs: number | undefined;
}

export interface PhaseResult {
  name: string;
  servers: Array<{ id: string; label: string; idleRssMb: number | undefined; warmRssMb: number | undefined }>;
  scenarios: Scenario[];
  cells: Cell[];
}

/** How a phase measures: rounds of `duration` seconds after a warm-up, over `connections`. */
export interface PhaseOptions {
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
}

/**
 * Measures every contender on every scenario, interleaved round after round
 * (the first server rotates), after checking they all answer the same.
 * Problems under load (wrong statuses, socket errors) go to `errors`.
 *
 * @example const compare = await runPhase('comparison', contenders, [SCENARIOS.list20], options, errors);
 */
export async function runPhase(name: string, contenders: Contender[], scenarios: Scenario[], options: PhaseOptions, errors: string[]): Promise<PhaseResult> {
  // Same answer from everyone, or the comparison means nothing.
  for (const scenario of scenarios) {
    let reference: { label: string; body: unknown } | undefined;
    for (const { server, key } of contenders) {
      let body = await probe(server, scenario, key);
      if (scenario.method === 'POST') body = { ...(body as object), id: '(assigned)' };
      if (!reference) reference = { label: server.spec.label, body };
      else if (!isDeepStrictEqual(body, reference.body)) {
        throw new Error(
          `${scenario.label}: ${server.spec.label} answers ${JSON.stringify(body).slice(0, 200)}, ` +
            `${reference.label} answers ${JSON.stringify(reference.body).slice(0, 200)}`,
        );
      }
    }
  }

  const measure = async (contender: Contender, scenario: Scenario, seconds: number, what: string): Promise<LoadResult> => {
    const result = await load(contender.server, scenario, contender.key, seconds, options.connections);
    contender.server.assertAlive();
    const problem = loadProblem(result, scenario);
    if (problem) errors.push(`${name} ${what}, ${scenario.label}, ${contender.server.spec.label}: ${problem}`);
    return result;
  };

  if (options.warmup > 0) {
    process.stdout.write(`  warm-up (${options.warmup} s per server and scenario)...`);
    for (const contender of contenders) for (const scenario of scenarios) await measure(contender, scenario, options.warmup, 'warm-up');
    process.stdout.write(' done\n');
  }
  const warmRss = new Map(contenders.map(({ server }) => [server.spec.id, rssMb(server.pid)]));

  const results = new Map<string, LoadResult[]>();
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, scenario] of scenarios.entries()) {
      // Rotate who goes first, so no server always follows the same one.
      const shift = (round + index) % contenders.length;
      for (const contender of [...contenders.slice(shift), ...contenders.slice(0, shift)]) {
        const result = await measure(contender, scenario, options.duration, `round ${round + 1}`);
        const key = `${contender.server.spec.id}|${scenario.id}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        console.log(
          `  [${round + 1}/${options.rounds}] ${scenario.label.padEnd(24)} ${contender.server.spec.label.padEnd(22)} ` +
            `${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50Ms, 2).padStart(6)} ms  p99 ${fmt(result.p99Ms, 2).padStart(6)} ms  ` +
            `peak RSS ${fmt(result.peakRssMb, 1).padStart(6)} MB`,
        );
      }
    }
  }

  const cells: Cell[] = [];
  for (const scenario of scenarios) {
    for (const { server } of contenders) {
      const rounds = results.get(`${server.spec.id}|${scenario.id}`) ?? [];
      const rps = rounds.map((round) => round.rps);
      cells.push({
        server: server.spec.id,
        scenario: scenario.id,
        rounds,
        rps: median(rps) ?? NaN,
        p50Ms: median(rounds.map((round) => round.p50Ms)) ?? NaN,
        p99Ms: median(rounds.map((round) => round.p99Ms)) ?? NaN,
        peakRssMb: maxOf(rounds.map((round) => round.peakRssMb)),
        minRps: Math.min(...rps),
        maxRps: Math.max(...rps),
        cpuUsPerRequest: median(rounds.map((round) => round.cpuUsPerRequest)),
        loopDelayP99Ms: median(rounds.map((round) => round.eventLoopDelay?.p99Ms)),
        loopDelayMaxMs: median(rounds.map((round) => round.eventLoopDelay?.maxMs)),
      });
    }
  }
  return {
    name,
    servers: contenders.map(({ server, idleRssMb }) => ({
      id: server.spec.id,
      label: server.spec.label,
      idleRssMb,
      warmRssMb: warmRss.get(server.spec.id),
    })),
    scenarios,
    cells,
  };
}

/** Starts a server, noting its RSS at rest. */
export async function startContender(spec: Parameters<typeof ServerProcess.start>[0], key: string): Promise<Contender> {
  const server = await ServerProcess.start(spec);
  return { server, key, idleRssMb: rssMb(server.pid) };
}
