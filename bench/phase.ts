/** A phase of the benchmark: servers (contenders) measured on scenarios, round after round. */
import { isDeepStrictEqual } from 'node:util';
import { ServerProcess, load, loadProblem, maxOf, median, probe, rssMb, type LoadResult, type Scenario } from './lib';
import { fmt } from './report';

export interface Contender {
  server: ServerProcess;
  key: string;
  idleRssMb: number | undefined;
  /** The SQLite file it serves from, which a scenario with a `reset` restores before each load; none for the baselines (memory). */
  database?: string;
  /** Scenarios it does not serve (e.g. an older checkout without the operation). */
  skips?: string[];
}

/** Whether a contender serves a scenario: a scenario that writes needs a database to undo its writes in. */
export const serves = (contender: Contender, scenario: Scenario): boolean =>
  !contender.skips?.includes(scenario.id) && (scenario.reset === undefined || contender.database !== undefined);

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
  /** Answers per status over the rounds (wrk without a walk: the expected status and "not 2xx/3xx"). */
  statusCodes: Record<string, number>;
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
    for (const contender of contenders.filter((candidate) => serves(candidate, scenario))) {
      const { server, key } = contender;
      // The servers may share one database: each probe finds it as the load will.
      if (scenario.reset) scenario.reset(contender.database!);
      const body = comparable(scenario, await probe(server, scenario, key));
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
    if (scenario.reset) scenario.reset(contender.database!);
    const result = await load(contender.server, scenario, contender.key, seconds, options.connections);
    contender.server.assertAlive();
    const problem = loadProblem(result, scenario);
    if (problem) errors.push(`${name} ${what}, ${scenario.label}, ${contender.server.spec.label}: ${problem}`);
    return result;
  };

  if (options.warmup > 0) {
    process.stdout.write(`  warm-up (${options.warmup} s per server and scenario)...`);
    for (const contender of contenders)
      for (const scenario of scenarios) if (serves(contender, scenario)) await measure(contender, scenario, options.warmup, 'warm-up');
    process.stdout.write(' done\n');
  }
  const warmRss = new Map(contenders.map(({ server }) => [server.spec.id, rssMb(server.pid)]));

  const results = new Map<string, LoadResult[]>();
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, scenario] of scenarios.entries()) {
      // Rotate who goes first, so no server always follows the same one.
      const shift = (round + index) % contenders.length;
      for (const contender of [...contenders.slice(shift), ...contenders.slice(0, shift)]) {
        if (!serves(contender, scenario)) continue;
        const result = await measure(contender, scenario, options.duration, `round ${round + 1}`);
        const key = `${contender.server.spec.id}|${scenario.id}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        console.log(
          `  [${round + 1}/${options.rounds}] ${scenario.label.padEnd(24)} ${contender.server.spec.label.padEnd(22)} ` +
            `${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50Ms, 2).padStart(6)} ms  p99 ${fmt(result.p99Ms, 2).padStart(6)} ms  ` +
            `peak RSS ${fmt(result.peakRssMb, 1).padStart(6)} MB` +
            (scenario.walk ? `  answers ${answersText(result.statusCodes)}` : ''),
        );
      }
    }
  }

  const cells: Cell[] = [];
  for (const scenario of scenarios) {
    for (const contender of contenders) {
      if (!serves(contender, scenario)) continue;
      const { server } = contender;
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
        statusCodes: sumCounts(rounds.map((round) => round.statusCodes)),
      });
    }
    if (scenario.walk) {
      // Every load of a walk must be the same work on every server: the expected answer, nearly always.
      // One server's 409s (pets it found taken) against another's 201s would compare two different things.
      const shares = cells.filter((cell) => cell.scenario === scenario.id).map((cell) => ({ cell, share: shareOf(cell.statusCodes, scenario.status) }));
      const best = Math.max(...shares.map(({ share }) => share));
      for (const { cell, share } of shares) {
        if (share < 0.99) {
          const label = contenders.find(({ server }) => server.spec.id === cell.server)?.server.spec.label ?? cell.server;
          errors.push(
            `${name}, ${scenario.label}: ${label} answered ${scenario.status} to ${fmt(share * 100, 1)} % of its requests (${answersText(cell.statusCodes)}), ` +
              `the best server to ${fmt(best * 100, 1)} %: its figures measure other work`,
          );
        }
      }
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

/** Starts a server, noting its RSS at rest; `serving` says what it serves from (its database) and which scenarios it skips. */
export async function startContender(
  spec: Parameters<typeof ServerProcess.start>[0],
  key: string,
  serving: Pick<Contender, 'database' | 'skips'> = {},
): Promise<Contender> {
  const server = await ServerProcess.start(spec);
  return { server, key, idleRssMb: rssMb(server.pid), ...serving };
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An answer as the servers' answers are compared: each field the server
 * assigns (`scenario.assigned`) replaced by its kind when it is one (a
 * positive integer id, an RFC 3339 date-time), left as it is otherwise, so a
 * malformed one still differs.
 */
function comparable(scenario: Scenario, body: unknown): unknown {
  if (scenario.assigned === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = { ...body };
  for (const [field, kind] of Object.entries(scenario.assigned)) {
    const value = copy[field];
    const wellFormed =
      kind === 'id'
        ? Number.isSafeInteger(value) && (value as number) >= 1
        : typeof value === 'string' && RFC_3339.test(value) && Number.isFinite(Date.parse(value));
    if (wellFormed) copy[field] = `(${kind})`;
  }
  return copy;
}

function sumCounts(counts: Array<Record<string, number>>): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const count of counts) for (const [status, number] of Object.entries(count)) sum[status] = (sum[status] ?? 0) + number;
  return sum;
}

/** The share of answers with `status` (0 when none was counted). */
export const shareOf = (counts: Record<string, number>, status: number): number => {
  const total = Object.values(counts).reduce((sum, number) => sum + number, 0);
  return total === 0 ? 0 : (counts[String(status)] ?? 0) / total;
};

/** Answers per status, as `201×12,345 409×0`. */
export const answersText = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, number]) => `${status}×${fmt(number)}`)
    .join(' ') || 'none';
