/**
 * A/B of the project server as it ships, under different Node flags (default:
 * those of `npm start`), settings or checkouts (or the same twice, to see the
 * noise): servers pinned, wrk, interleaved rounds, per scenario.
 *
 *   node --import tsx bench/ab.ts --flags=--max-semi-space-size=8 --flags=--max-semi-space-size=4 [--rounds 3] [--seconds 5] [--scenario list20 --scenario get]
 *   node --import tsx bench/ab.ts --root ../other-checkout --root .   (each built with npm run build)
 *   node --import tsx bench/ab.ts --env= --env=VALIDATE_RESPONSES=0         (settings, space-separated NAME=VALUE)
 *   node --import tsx bench/ab.ts --flags=... --flags=... --open-loop 2400 --rounds 6
 *       (instead of the closed loop: the first scenario offered at a fixed rate, open loop, one window of
 *       10 s per variant and round after a 10 s warm-up; p99 and full GCs per window, as `npm run bench` reports them)
 *   --instances N   servers started per variant (default 2): two processes of one build can differ by several
 *                   per cent in req/s for as long as they run (see bench/README.md), so one process
 *                   per variant can show a difference that is only the luck of its process; each variant's
 *                   figure is the median over all its processes' rounds, and each process's own is listed
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openLoop, type OpenLoopWindow } from './open-loop';
import {
  ROOT,
  SCENARIOS,
  SERVER_NODE_FLAGS,
  ServerProcess,
  killAllServers,
  load,
  loadProblem,
  median,
  prepareProjectDatabase,
  projectSpec,
  type Scenario,
} from './lib';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flags: { type: 'string', multiple: true },
      root: { type: 'string', multiple: true },
      env: { type: 'string', multiple: true },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      scenario: { type: 'string', multiple: true },
      'open-loop': { type: 'string' },
      instances: { type: 'string', default: '2' },
    },
  });
  // Checked before any server starts.
  const rounds = Number(values.rounds);
  const instances = Number(values.instances);
  if (!Number.isInteger(instances) || instances < 1)
    throw new Error(`--instances takes a whole number of servers per variant, not ${JSON.stringify(values.instances)}`);
  const scenarios = (values.scenario ?? ['list20']).map(scenarioOf);
  const rps = values['open-loop'] === undefined ? undefined : Number(values['open-loop']);
  if (rps !== undefined && !(rps > 0)) throw new Error(`--open-loop takes the requests per second to offer, not ${JSON.stringify(values['open-loop'])}`);
  const roots = (values.root ?? [ROOT]).map((root) => path.resolve(root));
  const flagSets = values.flags ?? [SERVER_NODE_FLAGS.join(' ')];
  const envSets = values.env ?? [''];
  const variants = roots.flatMap((root) => flagSets.flatMap((flags) => envSets.map((env) => ({ root, flags, env }))));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-ab-'));
  const database = await prepareProjectDatabase(scratch, 'ab', 1000);
  const servers = [];
  for (const [index, { root, flags, env }] of variants.entries()) {
    const label = `${path.relative(process.cwd(), root) || '.'} ${flags || '(no flags)'}${env ? ` ${env}` : ''}`;
    const settings = Object.fromEntries(
      env
        .split(' ')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    for (let instance = 0; instance < instances; instance++) {
      servers.push(await ServerProcess.start(projectSpec(`v${index}.${instance}`, label, database, flags.split(' ').filter(Boolean), root, { env: settings })));
    }
  }
  if (rps === undefined) for (const scenario of scenarios) await closedLoop(servers, scenario, database.key, rounds, Number(values.seconds));
  else await openLoopWindows(servers, scenarios[0]!, database.key, rounds, rps);
  for (const server of servers) await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}

function scenarioOf(id: string): Scenario {
  const scenario = SCENARIOS[id as keyof typeof SCENARIOS];
  if (!scenario) throw new Error(`no scenario ${JSON.stringify(id)}: one of ${Object.keys(SCENARIOS).join(', ')}`);
  return scenario;
}

/** Each server under a closed loop of 32 connections, round after round, interleaved: medians over the rounds. */
async function closedLoop(servers: readonly ServerProcess[], scenario: Scenario, key: string, rounds: number, seconds: number): Promise<void> {
  const results = servers.map(() => [] as Array<Awaited<ReturnType<typeof load>>>);
  for (const server of servers) await load(server, scenario, key, 2, 32);
  for (let round = 0; round < rounds; round++) {
    for (const [index, server] of servers.entries()) {
      const result = await load(server, scenario, key, seconds, 32);
      // Refused or failed requests are cheap and would count as speed.
      const problem = loadProblem(result, scenario);
      if (problem) throw new Error(`${scenario.label}, ${server.spec.label} [${server.spec.id}], round ${round + 1}: ${problem}`);
      results[index]!.push(result);
    }
  }
  console.log(scenario.label);
  for (const label of new Set(servers.map((server) => server.spec.label))) {
    const own = servers.flatMap((server, index) => (server.spec.label === label ? [results[index]!] : []));
    const all = own.flat();
    const perProcess = own.map((r) => (median(r.map((x) => x.cpuUsPerRequest)) ?? NaN).toFixed(1)).join(' / ');
    console.log(
      `  ${label.padEnd(40)} ${Math.round(median(all.map((x) => x.rps)) ?? NaN)} req/s  ${(median(all.map((x) => x.cpuUsPerRequest)) ?? NaN).toFixed(1)} µs CPU/req ` +
        `(per process ${perProcess})  p99 ${(median(all.map((x) => x.p99Ms)) ?? NaN).toFixed(2)} ms  peak RSS ${Math.max(...all.map((x) => x.peakRssMb ?? 0)).toFixed(1)} MB`,
    );
  }
}

/** Each server offered `rps` (open loop), one 10 s window per round, interleaved: every window's p99 and full GCs. */
async function openLoopWindows(servers: readonly ServerProcess[], scenario: Scenario, key: string, rounds: number, rps: number): Promise<void> {
  const windows = servers.map(() => [] as OpenLoopWindow[]);
  for (let round = 0; round < rounds; round++) {
    for (const [index, server] of servers.entries()) {
      const window = (await openLoop(server, scenario, key, { rps, seconds: 10, warmupSeconds: round === 0 ? 10 : 2, rounds: 1 })).windows[0]!;
      windows[index]!.push(window);
      const gcs = window.majorGcs ? `${window.majorGcs.count} (${window.majorGcs.pauseMs.toFixed(1)} ms)` : '?';
      console.log(
        `  round ${round + 1} ${server.spec.label} [${server.spec.id}]: p99 ${window.p99Ms.toFixed(2)} ms, p99.9 ${window.p999Ms.toFixed(2)} ms, full GCs ${gcs}`,
      );
    }
  }
  console.log(`${scenario.label}, open loop at ${rps} req/s: p99 ms of each 10 s window`);
  for (const [index, server] of servers.entries()) {
    const own = windows[index]!;
    const p99s = own.map((window) => `${window.p99Ms.toFixed(2)}${window.majorGcs ? ` (${window.majorGcs.count} full GC)` : ''}`);
    console.log(
      `  ${`${server.spec.label} [${server.spec.id}]`.padEnd(40)} ${p99s.join(', ')}  peak RSS ${Math.max(...own.map((window) => window.peakRssMb ?? 0)).toFixed(1)} MB`,
    );
  }
}

main().catch((error: unknown) => {
  killAllServers();
  console.error(error);
  process.exit(1);
});
