/**
 * The cost ledger: what each layer of a request costs, in server CPU µs per
 * request, measured on the real server with one layer at a time replaced by a
 * stand-in (bench/ledger-stand-ins.ts says what each stand-in does). A layer's
 * cost is the full stack's CPU per request minus the stack without it.
 *
 * CPU time per response (from /proc, user + system) rather than req/s: with
 * the server pinned to its own core it is the same figure without the load
 * generator's share of the noise.
 */
import { isDeepStrictEqual } from 'node:util';
import { CONFIGURED_LAYERS, LAYERS, STAND_INS, type Layer } from './ledger-stand-ins';
import { SCENARIOS, SERVER_NODE_FLAGS, ServerProcess, load, loadProblem, median, probe, projectSpec, type LoadResult, type ProjectDatabase, type Scenario } from './lib';

export const LEDGER_SCENARIOS: Scenario[] = [SCENARIOS.list20, SCENARIOS.get, SCENARIOS.create];

export { STAND_INS };

export interface LedgerOptions {
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  layers?: Layer[];
}

export interface LedgerVariant {
  layer: Layer | 'none';
  /** Why it could not be measured (e.g. a layer this pipeline cannot separate). */
  unavailable?: string;
  /** Median CPU µs per request, per scenario id. */
  cpuUs: Record<string, number>;
  rps: Record<string, number>;
  rounds: Record<string, LoadResult[]>;
}

export interface LedgerResult {
  scenarios: Scenario[];
  variants: LedgerVariant[];
  errors: string[];
}

const firstLine = (error: unknown): string => String((error as Error).message ?? error).split('\n')[0]!;

/** Runs the ledger against `database` (SQLite, enterprise key). */
export async function runLedger(database: ProjectDatabase, options: LedgerOptions, log: (line: string) => void = console.log): Promise<LedgerResult> {
  const layers = options.layers ?? [...LAYERS];
  const errors: string[] = [];
  const variants: LedgerVariant[] = [];
  const servers = new Map<string, ServerProcess>();
  try {
    for (const layer of ['none' as const, ...layers]) {
      const variant: LedgerVariant = { layer, cpuUs: {}, rps: {}, rounds: {} };
      variants.push(variant);
      const configured = layer === 'none' ? undefined : CONFIGURED_LAYERS[layer];
      const label = layer === 'none' ? 'full stack' : configured?.adds ? `with ${layer}` : `without ${layer}`;
      const spec = projectSpec(`ledger-${layer}`, label, database, undefined, undefined, { env: configured?.env ?? {} });
      spec.args = [...SERVER_NODE_FLAGS, '--import', 'tsx', 'bench/servers/ledger-server.ts'];
      spec.env = { ...spec.env, LEDGER_LAYERS: layer === 'none' || configured ? '' : layer };
      try {
        servers.set(layer, await ServerProcess.start(spec));
      } catch (error) {
        if (layer === 'none') throw error;
        variant.unavailable = firstLine(error).replace(/^.*failed to start: /, '');
        log(`  without ${layer}: not measured (${variant.unavailable})`);
      }
    }
    // Every stand-in must answer what the full stack answers, or its figure means nothing.
    const reference = new Map<string, unknown>();
    for (const variant of variants) {
      const server = servers.get(variant.layer);
      if (!server) continue;
      for (const scenario of LEDGER_SCENARIOS) {
        let body = await probe(server, scenario, database.key);
        if (scenario.method === 'POST') body = { ...(body as object), id: '(assigned)' };
        if (!reference.has(scenario.id)) reference.set(scenario.id, body);
        else if (!isDeepStrictEqual(reference.get(scenario.id), body)) {
          throw new Error(`ledger: ${scenario.label} without ${variant.layer} answers ${JSON.stringify(body).slice(0, 200)}`);
        }
      }
    }
    const measured = variants.filter((variant) => servers.has(variant.layer));
    const measure = async (variant: LedgerVariant, scenario: Scenario, seconds: number, what: string): Promise<LoadResult> => {
      const server = servers.get(variant.layer)!;
      const result = await load(server, scenario, database.key, seconds, options.connections);
      server.assertAlive();
      const problem = loadProblem(result, scenario);
      if (problem) errors.push(`ledger ${what}, ${scenario.label}, ${server.spec.label}: ${problem}`);
      return result;
    };
    if (options.warmup > 0) {
      log(`  ledger warm-up (${options.warmup} s per variant and scenario)...`);
      for (const variant of measured) for (const scenario of LEDGER_SCENARIOS) await measure(variant, scenario, options.warmup, 'warm-up');
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const [index, scenario] of LEDGER_SCENARIOS.entries()) {
        const shift = (round + index) % measured.length;
        for (const variant of [...measured.slice(shift), ...measured.slice(0, shift)]) {
          const result = await measure(variant, scenario, options.duration, `round ${round + 1}`);
          (variant.rounds[scenario.id] ??= []).push(result);
          log(
            `  [${round + 1}/${options.rounds}] ${scenario.label.padEnd(24)} ${servers.get(variant.layer)!.spec.label.padEnd(28)} ` +
              `${(result.cpuUsPerRequest ?? NaN).toFixed(1).padStart(7)} µs CPU/request  ${Math.round(result.rps).toString().padStart(6)} req/s`,
          );
        }
      }
    }
    for (const variant of measured) {
      for (const scenario of LEDGER_SCENARIOS) {
        const rounds = variant.rounds[scenario.id] ?? [];
        variant.cpuUs[scenario.id] = median(rounds.map((result) => result.cpuUsPerRequest ?? NaN));
        variant.rps[scenario.id] = median(rounds.map((result) => result.rps));
      }
    }
  } finally {
    for (const server of servers.values()) await server.stop();
  }
  return { scenarios: LEDGER_SCENARIOS, variants, errors };
}

/**
 * A layer's cost in one scenario: the median over rounds of (full stack −
 * stack without the layer), each difference taken within one round, so a
 * slow spell of the machine that hits one round hits both sides of it.
 */
export function layerCost(ledger: LedgerResult, variant: LedgerVariant, scenario: string): number {
  const full = ledger.variants.find((candidate) => candidate.layer === 'none')!;
  const fullRounds = full.rounds[scenario] ?? [];
  const sign = addsWork(variant) ? -1 : 1;
  const differences = (variant.rounds[scenario] ?? []).map((result, round) => sign * ((fullRounds[round]?.cpuUsPerRequest ?? NaN) - (result.cpuUsPerRequest ?? NaN)));
  return median(differences);
}

/** A variant that adds work to the full stack (its cost is not part of the full stack's sum). */
const addsWork = (variant: LedgerVariant): boolean => variant.layer !== 'none' && CONFIGURED_LAYERS[variant.layer]?.adds === true;

/** The ledger as rows: each layer's µs per request (full minus without it) and its share of the full stack. */
export function ledgerRows(ledger: LedgerResult): string[][] {
  const full = ledger.variants.find((variant) => variant.layer === 'none')!;
  const cell = (us: number | undefined, of: number | undefined): string =>
    us === undefined || !Number.isFinite(us) ? 'n/a' : `${us.toFixed(1)}${of ? ` (${Math.round((100 * us) / of)} %)` : ''}`;
  const rows = ledger.variants
    .filter((variant) => variant.layer !== 'none' && !addsWork(variant))
    .map((variant) => [
      variant.layer !== 'none' && CONFIGURED_LAYERS[variant.layer]?.partOf ? `  of which ${variant.layer} (in ${CONFIGURED_LAYERS[variant.layer]!.partOf})` : variant.layer,
      ...ledger.scenarios.map((scenario) =>
        variant.unavailable ? 'n/a' : cell(layerCost(ledger, variant, scenario.id), full.cpuUs[scenario.id]),
      ),
    ]);
  const layersSum = (scenario: Scenario): number =>
    ledger.variants
      .filter((variant) => variant.layer !== 'none' && !variant.unavailable && !addsWork(variant) && !CONFIGURED_LAYERS[variant.layer]?.partOf)
      .reduce((sum, variant) => sum + layerCost(ledger, variant, scenario.id), 0);
  rows.push(['sum of the layers above', ...ledger.scenarios.map((scenario) => cell(layersSum(scenario), full.cpuUs[scenario.id]))]);
  rows.push([
    'the rest (Node HTTP, Express core, kernel, GC)',
    ...ledger.scenarios.map((scenario) => cell(full.cpuUs[scenario.id]! - layersSum(scenario), full.cpuUs[scenario.id])),
  ]);
  rows.push(['full stack (CPU µs per request)', ...ledger.scenarios.map((scenario) => cell(full.cpuUs[scenario.id], undefined))]);
  rows.push(['full stack (req/s, one core)', ...ledger.scenarios.map((scenario) => Math.round(full.rps[scenario.id] ?? NaN).toLocaleString('en-US'))]);
  // Work the default does not do, measured on top of the full stack.
  for (const variant of ledger.variants.filter(addsWork)) {
    rows.push([
      `+ ${variant.layer} (extra over the full stack)`,
      ...ledger.scenarios.map((scenario) => (variant.unavailable ? 'n/a' : cell(layerCost(ledger, variant, scenario.id), full.cpuUs[scenario.id]))),
    ]);
  }
  return rows;
}

export const ledgerHeader = (ledger: LedgerResult): string[] => ['layer (µs per request, share of the full stack)', ...ledger.scenarios.map((scenario) => scenario.label)];
