/**
 * `node --import tsx bench/profile.ts`: runs the
 * project's server (production mode, as in `npm run bench`) under
 * `node --cpu-prof`, loads one scenario, and summarises where the CPU went
 * during the load only (samples outside the load window are dropped: the
 * profile's clock is the same monotonic clock as this process's hrtime).
 *
 *   --scenario list20|list100|get|create   BENCH_PROFILE_SCENARIO (default list20)
 *   --seconds S                            BENCH_PROFILE_SECONDS  (default 5)
 *   --warmup S                             BENCH_WARMUP           (default 2)
 *   --dir DIR                              BENCH_PROFILE_DIR      where the .cpuprofile goes (default a new folder under the OS temp dir;
 *                                                                  never inside the repository)
 *   --top N                                functions listed (default 25)
 *   --no-build                             BENCH_BUILD=0
 *   --analyse FILE.cpuprofile              only summarise an existing profile (whole profile, no load)
 *
 * Writes the summary to bench/results/profile.md; the .cpuprofile itself stays
 * outside the repository (open it in Chrome DevTools or speedscope).
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, SCENARIOS, ServerProcess, killAllServers, load, loadProblem, prepareProjectDatabase, probe, projectSpec, runCommand } from './lib';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const SPECIAL = new Set(['(program)', '(idle)', '(garbage collector)', '(root)']);

/** Which library, part of Node or part of src/ a frame belongs to. */
function categoryOf(frame: CallFrame): { name: string; userland: boolean } {
  const { url, functionName } = frame;
  if (!url) return { name: SPECIAL.has(functionName) ? functionName : '(V8 builtins / native)', userland: false };
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return { name: first!.startsWith('@') ? `${first}/${second}` : first!, userland: true };
  }
  if (url.startsWith('node:')) {
    const rest = url.slice('node:'.length);
    const parts = rest.split('/');
    return { name: `node:${parts[0] === 'internal' && parts.length > 2 ? `internal/${parts[1]}` : rest}`, userland: false };
  }
  const src = url.indexOf('/dist/src/');
  if (src !== -1) {
    const parts = url.slice(src + '/dist/src/'.length).split('/');
    return { name: `src/${parts.length > 1 ? parts[0] : parts[0]!.replace(/\.js$/, '')}`, userland: true };
  }
  return { name: url.replace(/^file:\/\//, '').replace(ROOT + '/', ''), userland: true };
}

function location(frame: CallFrame): string {
  if (!frame.url) return '';
  const modules = frame.url.lastIndexOf('/node_modules/');
  const short =
    modules !== -1
      ? frame.url.slice(modules + '/node_modules/'.length)
      : frame.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
  return `${short}:${frame.lineNumber + 1}`;
}

interface ProfileSummary {
  windowMs: number;
  busyMs: number;
  idleMs: number;
  gcMs: number;
  functions: Array<{ name: string; where: string; category: string; selfMs: number; busyShare: number }>;
  categories: Array<{ category: string; selfMs: number; busyShare: number }>;
  owners: Array<{ owner: string; ms: number; busyShare: number }>;
  stages: Array<{ stage: string; ms: number; busyShare: number }>;
}

const isLayerCall = (frame: CallFrame): boolean => frame.functionName === 'handleRequest' && /\/router\/lib\/layer\.js$/.test(frame.url);

/**
 * Which stage of the request a sample belongs to: the middleware or handler
 * the Express router is running (the innermost function a router layer
 * called: its own synchronous work, not what runs after its next()); for code
 * resumed after an await (Express 5 middleware and handlers are async), the
 * function that resumed; otherwise the Node core entry point.
 */
function stageOf(chain: CallFrame[]): string {
  for (let index = 0; index + 1 < chain.length; index++) {
    if (isLayerCall(chain[index + 1]!)) {
      const frame = chain[index]!;
      return `layer ${frame.functionName || '(anonymous)'} (${location(frame)})`;
    }
  }
  for (let index = chain.length - 1; index >= 0; index--) {
    const frame = chain[index]!;
    if (categoryOf(frame).userland) return `resumed ${frame.functionName || '(anonymous)'} (${location(frame)})`;
  }
  const entry = chain[chain.length - 2] ?? chain[0]!;
  return `node ${entry.functionName || '(anonymous)'}${entry.url ? ` (${location(entry)})` : ''}`;
}

/**
 * Self time per function and per library, and "owner" time: each sample is
 * charged to the innermost frame that belongs to a package or to src/ (so
 * JSON.stringify called by res.json is Express's, a SHA-256 called by
 * src/auth is src/auth's). Only samples within [fromUs, toUs] count.
 */
function summarise(profile: CpuProfile, fromUs = -Infinity, toUs = Infinity, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfUs = new Map<number, number>();
  let timestamp = profile.startTime;
  let windowUs = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    timestamp += profile.timeDeltas[index] ?? 0;
    const duration = profile.timeDeltas[index + 1] ?? 0;
    if (timestamp < fromUs || timestamp > toUs) continue;
    windowUs += duration;
    const id = profile.samples[index]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + duration);
  }

  const functions = new Map<string, { name: string; where: string; category: string; us: number }>();
  const categories = new Map<string, number>();
  const owners = new Map<string, number>();
  const stages = new Map<string, number>();
  let idleUs = 0;
  let gcUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    if (frame.functionName === '(garbage collector)') gcUs += us;
    const category = categoryOf(frame).name;
    const key = `${frame.functionName}@${frame.url}:${frame.lineNumber}:${frame.columnNumber}`;
    const entry = functions.get(key) ?? { name: frame.functionName || '(anonymous)', where: location(frame), category, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    categories.set(category, (categories.get(category) ?? 0) + us);

    const chain: CallFrame[] = [];
    for (let walk: number | undefined = id; walk !== undefined; walk = parent.get(walk)) chain.push(byId.get(walk)!.callFrame);
    const owner = chain.map((candidate) => categoryOf(candidate)).find((candidate) => candidate.userland)?.name ?? category;
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const stage = stageOf(chain);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
  }
  const busyUs = windowUs - idleUs;
  const share = (us: number): number => (busyUs > 0 ? us / busyUs : 0);
  const ms = (us: number): number => Math.round(us / 100) / 10;
  return {
    windowMs: ms(windowUs),
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    gcMs: ms(gcUs),
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map(({ name, where, category, us }) => ({ name, where, category, selfMs: ms(us), busyShare: share(us) })),
    categories: [...categories.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([category, us]) => ({ category, selfMs: ms(us), busyShare: share(us) })),
    owners: [...owners.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([owner, us]) => ({ owner, ms: ms(us), busyShare: share(us) })),
    stages: [...stages.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([stage, us]) => ({ stage, ms: ms(us), busyShare: share(us) })),
  };
}

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

function render(summary: ProfileSummary, title: string): string {
  return [
    `# ${title}`,
    '',
    `Window ${summary.windowMs} ms: busy ${summary.busyMs} ms, idle ${summary.idleMs} ms, GC ${summary.gcMs} ms (${percent(summary.gcMs / summary.busyMs)} of busy).`,
    '',
    '## Top functions by self time (% of busy time)',
    '',
    '| # | function | where | group | self ms | share |',
    '|---:|---|---|---|---:|---:|',
    ...summary.functions.map((f, i) => `| ${i + 1} | \`${f.name}\` | ${f.where} | ${f.category} | ${f.selfMs} | ${percent(f.busyShare)} |`),
    '',
    '## Self time by group',
    '',
    '| group | self ms | share |',
    '|---|---:|---:|',
    ...summary.categories.slice(0, 30).map((c) => `| ${c.category} | ${c.selfMs} | ${percent(c.busyShare)} |`),
    '',
    '## Time by owner (each sample charged to its innermost package or src/ frame; Node core and builtins go to their caller)',
    '',
    '| owner | ms | share |',
    '|---|---:|---:|',
    ...summary.owners.slice(0, 30).map((o) => `| ${o.owner} | ${o.ms} | ${percent(o.busyShare)} |`),
    '',
    '## Time by request stage',
    '',
    'A sample goes to the middleware or handler a router layer is running (its own synchronous work; what it calls through `next()` goes to the next layer), or, for code resumed after an `await`, to the function that resumed, or else to the Node core entry point (HTTP parser, socket writes, GC).',
    '',
    '| stage | ms | share |',
    '|---|---:|---:|',
    ...summary.stages.slice(0, 25).map((s) => `| ${s.stage} | ${s.ms} | ${percent(s.busyShare)} |`),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      dir: { type: 'string' },
      top: { type: 'string' },
      'no-build': { type: 'boolean' },
      analyse: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
    return;
  }
  const top = Number(values.top ?? 25);
  if (values.analyse) {
    const profile = JSON.parse(readFileSync(values.analyse, 'utf8')) as CpuProfile;
    console.log(render(summarise(profile, -Infinity, Infinity, top), `CPU profile ${values.analyse} (whole profile)`));
    return;
  }

  const scenarioId = values.scenario ?? process.env.BENCH_PROFILE_SCENARIO ?? 'list20';
  const scenario = SCENARIOS[scenarioId as keyof typeof SCENARIOS];
  if (!scenario) throw new Error(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  const seconds = Number(values.seconds ?? process.env.BENCH_PROFILE_SECONDS ?? 5);
  const warmup = Number(values.warmup ?? process.env.BENCH_WARMUP ?? 2);
  if (!Number.isInteger(seconds) || seconds < 1 || !Number.isInteger(warmup) || warmup < 0) throw new Error('--seconds and --warmup are whole seconds');
  const dir = path.resolve(values.dir ?? process.env.BENCH_PROFILE_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'pet-bench-profile-')));
  if (dir === ROOT || dir.startsWith(ROOT + path.sep)) throw new Error(`keep .cpuprofile files out of the repository: ${dir}`);
  mkdirSync(dir, { recursive: true });
  const profileFile = path.join(dir, `project-${scenario.id}-${Date.now()}.cpuprofile`);

  if (!(values['no-build'] ?? process.env.BENCH_BUILD === '0')) await runCommand('npm', ['run', '--silent', 'build'], { inheritOutput: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-bench-'));
  let fromUs = 0;
  let toUs = 0;
  try {
    const database = await prepareProjectDatabase(scratch, 'profile', 1000);
    const server = await ServerProcess.start(
      projectSpec('project', 'project (--cpu-prof)', database, ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${path.basename(profileFile)}`]),
    );
    try {
      await probe(server, scenario, database.key);
      if (warmup > 0) await load(server, scenario, database.key, warmup, 32);
      fromUs = Number(process.hrtime.bigint() / 1000n);
      const result = await load(server, scenario, database.key, seconds, 32);
      toUs = Number(process.hrtime.bigint() / 1000n);
      const problem = loadProblem(result, scenario);
      if (problem) throw new Error(`${scenario.label}: ${problem}`);
      console.log(
        `${scenario.label} under --cpu-prof: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (profiling slows it down)`,
      );
    } finally {
      await server.stop(); // graceful exit: node writes the profile
    }
  } finally {
    killAllServers();
    rmSync(scratch, { recursive: true, force: true });
  }

  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const title = `CPU profile of the project server: ${scenario.label}, ${seconds} s at 32 connections (load window only)`;
  const markdown = `${render(summarise(profile, fromUs, toUs, top), title)}\n_Node ${process.version}, ${os.cpus()[0]?.model ?? ''} × ${os.cpus().length}, ${new Date().toISOString()}; profile: ${profileFile} (not kept in the repository)._\n`;
  console.log(markdown);
  const out = path.join(ROOT, 'bench', 'results', 'profile.md');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, markdown);
  renameSync(`${out}.tmp`, out);
  console.log(`profile: ${profileFile}\nsummary: bench/results/profile.md`);
}

main().catch((error: unknown) => {
  killAllServers();
  console.error(`bench:profile: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
