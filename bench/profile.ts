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
 *   --server project|eov-peer|fastify-peer the server profiled (default project; a peer is installed when missing)
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
import { PEERS, ROOT, SCENARIOS, installPeer, killAllServers, prepareProjectDatabase, runCommand, type PeerId } from './lib';
import { profileUnderLoad, summarise, type CpuProfile, type ProfileSummary } from './cpu-profile';

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
      server: { type: 'string' },
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
  const dir = values.dir ?? process.env.BENCH_PROFILE_DIR;
  const server = values.server ?? 'project';
  if (server !== 'project' && !(server in PEERS)) throw new Error(`--server must be project or one of ${Object.keys(PEERS).join(', ')}`);
  const peer = server === 'project' ? undefined : (server as PeerId);
  if (dir) mkdirSync(dir, { recursive: true });

  if (!(values['no-build'] ?? process.env.BENCH_BUILD === '0')) await runCommand('npm', ['run', '--silent', 'build'], { inheritOutput: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-bench-'));
  let profiled: Awaited<ReturnType<typeof profileUnderLoad>>;
  try {
    const database = await prepareProjectDatabase(scratch, 'profile', 1000);
    if (peer) await installPeer(peer);
    profiled = await profileUnderLoad(database, scenario, { seconds, warmup, ...(dir && { dir }), ...(peer && { peer }) });
    const result = profiled.load;
    console.log(
      `${scenario.label} under --cpu-prof: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (profiling slows it down)`,
    );
  } finally {
    killAllServers();
    rmSync(scratch, { recursive: true, force: true });
  }
  const { profile, fromUs, toUs, file: profileFile } = profiled;
  const title = `CPU profile of the ${peer ?? 'project'} server: ${scenario.label}, ${seconds} s at 32 connections (load window only)`;
  const markdown = `${render(summarise(profile, fromUs, toUs, top), title)}\n_Node ${process.version}, ${os.cpus()[0]?.model ?? ''} × ${os.cpus().length}, ${new Date().toISOString()}; profile: ${path.basename(profileFile)} in the OS temp dir (not kept in the repository)._\n`;
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
