/**
 * The cost ledger: what each layer of a request costs, in server CPU µs per
 * request, on the real server as it ships, measured from the outside:
 *
 * - the full stack's CPU per request, from /proc (user + system over the
 *   load, divided by the responses), median over rounds;
 * - how that CPU divides between the layers, from a CPU profile of the same
 *   server under the same load (`node --cpu-prof`; bench/cpu-profile.ts says
 *   which code is each layer's), each layer's share of the busy time times
 *   the full stack's CPU per request;
 * - what checking every response against the contract would add
 *   (VALIDATE_RESPONSES=1 against the default), an A/B of two servers.
 *
 * Nothing in the product is replaced or hooked: the profiler sees the code
 * that ships. Its own overhead slows every layer alike, so the shares hold.
 */
import { discardProfile, layerTimes, LAYERS, profileUnderLoad, REST, type Layer } from './cpu-profile';
import { SCENARIOS, ServerProcess, load, loadProblem, median, probe, projectSpec, type LoadResult, type ProjectDatabase, type Scenario } from './lib';

export const LEDGER_SCENARIOS: Scenario[] = [SCENARIOS.list20, SCENARIOS.get, SCENARIOS.create];

export interface LedgerOptions {
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
}

export interface LedgerServer {
  /** Median CPU µs per request, per scenario id. */
  cpuUs: Record<string, number>;
  rps: Record<string, number>;
  rounds: Record<string, LoadResult[]>;
}

export interface LedgerResult {
  scenarios: Scenario[];
  /** The server as `npm start` runs it in production. */
  fullStack: LedgerServer;
  /** The same with VALIDATE_RESPONSES=1. */
  everyResponse: LedgerServer;
  /** Per scenario id: each layer's share of the profiled busy time (the rest included), 0 to 1. */
  shares: Record<string, Partial<Record<Layer | typeof REST, number>>>;
  errors: string[];
}

/** What each layer's code is (printed under the ledger's table). */
export const LAYER_NOTES: Record<Layer | typeof REST, string> = {
  'access-log': 'pino and its buffered file writer (src/observability/logger.ts): the access-log line',
  'response-sampling': 'the draw of responses to check after they are sent, and the checks of the drawn ones (VALIDATE_RESPONSES)',
  observability: 'the request id, the duration histogram (prom-client), the access-log record (src/observability)',
  'security-headers': "helmet's headers, computed at start, set on each response",
  routing: 'the route table and the per-operation dispatch (packages/engine/src/contract/route-table.ts, packages/engine/src/pipeline/operation-pipeline.ts)',
  authentication: 'credentials read and checked, the key cache (packages/engine/src/security, src/service/keys)',
  'rate-limiting': 'the windows counted, the bans, the rate-limit headers (src/service/rate-limit, src/service/shared-state)',
  parameters: 'path, query, header and cookie parameters read by style and checked (packages/engine/src/request/parameters.ts, styles.ts)',
  'body-parsing': 'the body read in its media type (packages/engine/src/request/body.ts)',
  validation: 'express-openapi-validator and Ajv on the body (packages/engine/src/request/validator.ts)',
  handler: 'the handler, its repository, Kysely and the database driver, paging (src/service)',
  serialization: 'the response written: JSON.stringify, headers (packages/engine/src/response)',
  [REST]: "Node's HTTP parser and socket writes (the kernel's share included), Express and its router, GC",
};

/** Runs the ledger against `database` (SQLite, enterprise key). */
export async function runLedger(database: ProjectDatabase, options: LedgerOptions, log: (line: string) => void = console.log): Promise<LedgerResult> {
  const errors: string[] = [];
  const fullStack: LedgerServer = { cpuUs: {}, rps: {}, rounds: {} };
  const everyResponse: LedgerServer = { cpuUs: {}, rps: {}, rounds: {} };
  const servers: Array<[LedgerServer, ServerProcess]> = [];
  try {
    servers.push([fullStack, await ServerProcess.start(projectSpec('ledger-full', 'full stack', database))]);
    servers.push([
      everyResponse,
      await ServerProcess.start(projectSpec('ledger-every', 'VALIDATE_RESPONSES=1', database, undefined, undefined, { env: { VALIDATE_RESPONSES: '1' } })),
    ]);
    const measure = async (server: ServerProcess, scenario: Scenario, seconds: number, what: string): Promise<LoadResult> => {
      const result = await load(server, scenario, database.key, seconds, options.connections);
      server.assertAlive();
      const problem = loadProblem(result, scenario);
      if (problem) errors.push(`ledger ${what}, ${scenario.label}, ${server.spec.label}: ${problem}`);
      return result;
    };
    for (const [, server] of servers) for (const scenario of LEDGER_SCENARIOS) await probe(server, scenario, database.key);
    if (options.warmup > 0) {
      log(`  ledger warm-up (${options.warmup} s per server and scenario)...`);
      for (const [, server] of servers) for (const scenario of LEDGER_SCENARIOS) await measure(server, scenario, options.warmup, 'warm-up');
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const [index, scenario] of LEDGER_SCENARIOS.entries()) {
        const order = (round + index) % 2 === 0 ? servers : [...servers].reverse();
        for (const [record, server] of order) {
          const result = await measure(server, scenario, options.duration, `round ${round + 1}`);
          record.rounds[scenario.id] ??= [];
          record.rounds[scenario.id]!.push(result);
          log(
            `  [${round + 1}/${options.rounds}] ${scenario.label.padEnd(24)} ${server.spec.label.padEnd(22)} ` +
              `${(result.cpuUsPerRequest ?? NaN).toFixed(1).padStart(7)} µs CPU/request  ${Math.round(result.rps).toString().padStart(6)} req/s`,
          );
        }
      }
    }
  } finally {
    for (const [, server] of servers) await server.stop();
  }
  for (const record of [fullStack, everyResponse]) {
    for (const scenario of LEDGER_SCENARIOS) {
      const rounds = record.rounds[scenario.id] ?? [];
      record.cpuUs[scenario.id] = median(rounds.map((result) => result.cpuUsPerRequest)) ?? NaN;
      record.rps[scenario.id] = median(rounds.map((result) => result.rps)) ?? NaN;
    }
  }

  const shares: LedgerResult['shares'] = {};
  for (const scenario of LEDGER_SCENARIOS) {
    log(`  profile: ${scenario.label}, ${options.duration} s under node --cpu-prof`);
    const profiled = await profileUnderLoad(database, scenario, { seconds: options.duration, warmup: options.warmup, connections: options.connections });
    const { busyUs, byLayer } = layerTimes(profiled.profile, profiled.fromUs, profiled.toUs);
    shares[scenario.id] = Object.fromEntries([...byLayer].map(([layer, us]) => [layer, busyUs > 0 ? us / busyUs : NaN]));
    discardProfile(profiled);
  }
  return { scenarios: LEDGER_SCENARIOS, fullStack, everyResponse, shares, errors };
}

const cell = (us: number | undefined, of: number | undefined): string =>
  us === undefined || !Number.isFinite(us) ? 'n/a' : `${us.toFixed(1)}${of ? ` (${Math.round((100 * us) / of)} %)` : ''}`;

/** The ledger as rows: each layer's µs per request (its share of the profile times the full stack's CPU per request). */
export function ledgerRows(ledger: LedgerResult): string[][] {
  const full = (scenario: Scenario): number | undefined => ledger.fullStack.cpuUs[scenario.id];
  const costOf = (layer: Layer | typeof REST, scenario: Scenario): number => (ledger.shares[scenario.id]?.[layer] ?? 0) * (full(scenario) ?? NaN);
  const rows = [...LAYERS, REST].map((layer) => [layer, ...ledger.scenarios.map((scenario) => cell(costOf(layer, scenario), full(scenario)))]);
  rows.push(['full stack (CPU µs per request)', ...ledger.scenarios.map((scenario) => cell(full(scenario), undefined))]);
  rows.push([
    'full stack (req/s, one core)',
    ...ledger.scenarios.map((scenario) => Math.round(ledger.fullStack.rps[scenario.id] ?? NaN).toLocaleString('en-US')),
  ]);
  rows.push([
    '+ validate-every-response (VALIDATE_RESPONSES=1, extra over the full stack)',
    ...ledger.scenarios.map((scenario) => {
      const full = ledger.fullStack.rounds[scenario.id] ?? [];
      // Each round's difference, so a slow spell of the machine hits both sides of it.
      const extra = median(
        (ledger.everyResponse.rounds[scenario.id] ?? []).map((result, round) => (result.cpuUsPerRequest ?? NaN) - (full[round]?.cpuUsPerRequest ?? NaN)),
      );
      return cell(extra, ledger.fullStack.cpuUs[scenario.id]);
    }),
  ]);
  return rows;
}

export const ledgerHeader = (ledger: LedgerResult): string[] => [
  'layer (µs per request, share of the full stack)',
  ...ledger.scenarios.map((scenario) => scenario.label),
];
