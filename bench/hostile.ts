/**
 * `node --import tsx bench/hostile.ts [--pets N] [--no-build] [--root DIR] [--label NAME] [--scenario S ...] [--slow-reader]`
 * (`npm run bench:hostile`): the security review's attacks on streams
 * (issue 48), each against a fresh server as `npm start` runs it in
 * production (`NODE_ENV=production`, SQLite, one process) holding N pets
 * (200,000), while another key probes `GET /v2/pets?limit=1` twenty times a
 * second over one keep-alive connection from another address, each probe
 * given 10 s (bench/probe-client.mjs, a process of its own):
 *
 * - `exports`: one free key opens 60 exports (`GET /v2/pets/export`) at once
 *   and reads them as fast as it can;
 * - `trickle`: 4 keys each POST a JSON Lines body (`Transfer-Encoding:
 *   chunked`) whose first chunk is 500,000 `é` without a line feed, then
 *   one-byte chunks, 10 a millisecond, for 30 s (served by
 *   bench/servers/with-import.cjs: the same compiled server with the
 *   repository's 3.2 library fixture as one more version, since the store
 *   declares no body of items);
 * - `stalled`: 120 keys each open an export, read its headers and stop
 *   reading, for 60 s;
 * - `blank-lines`: one free key sends 10 bodies of 100 MiB of blank lines
 *   at once, as fast as the server reads them;
 * - `tiny-items`: one body of 100 MiB of tiny valid items;
 * - with `--slow-reader`, also `slow-reader`: one export read 256 KiB every
 *   25 s, until the server cuts it (at most 330 s).
 *
 * Each attack is probed for at least 10 s from its start. Reports, per
 * attack, the probes' p50, p99, maximum and time-outs and the
 * server's RSS growth (peak during the attack over its rest just before),
 * against the targets: p99 under 100 ms, no time-out, growth under 50 MB.
 * `--root` measures another checkout (built there), for figures before a
 * change. Writes its results under bench/results/: hostile.md and .json, or
 * with `--label NAME` hostile-NAME.md and .json.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  HOST,
  PeakRss,
  ROOT,
  ServerProcess,
  SERVER_NODE_FLAGS,
  killAllServers,
  prepareProjectDatabase,
  projectSpec,
  rssMb,
  runCommand,
  scrapeMetrics,
  sleep,
} from './lib';
import type { ProjectDatabase } from './lib';

const SCENARIOS = ['exports', 'trickle', 'stalled', 'blank-lines', 'tiny-items'] as const;
type Scenario = (typeof SCENARIOS)[number] | 'slow-reader';

/** The probes' address: another client than the attackers (127.0.0.1), as a real one would be. */
const PROBE_ADDRESS = '127.0.0.2';
const PROBE_INTERVAL_MS = 50;
const PROBE_TIMEOUT_MS = 10_000;
const MIN_PROBE_MS = 10_000;

interface Probes {
  count: number;
  p50: number;
  p99: number;
  max: number;
  timeouts: number;
  errors: number;
}

interface Outcome {
  scenario: Scenario;
  seconds: number;
  probes: Probes;
  restMb: number;
  peakMb: number;
  growthMb: number;
  /** What the attack's requests got: statuses and how they ended. */
  attack: Record<string, number | string>;
}

/** The probes (bench/probe-client.mjs, a process of its own) until stopped. */
function startProbes(baseUrl: string, key: string): { stop(): Promise<Probes> } {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bench/probe-client.mjs'), baseUrl, key, String(PROBE_INTERVAL_MS), String(PROBE_TIMEOUT_MS), PROBE_ADDRESS],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.stdin.write('stop\n');
      await exited;
      const { latencies, timeouts, errors, slow } = JSON.parse(output) as { latencies: number[]; timeouts: number; errors: number; slow: [number, number][] };
      if (process.env.BENCH_VERBOSE)
        console.log(`  probes over 100 ms (sent at s, took ms; the first 20 of ${slow.length}): ${JSON.stringify(slow.slice(0, 20))}`);
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
      return { count: sorted.length + timeouts + errors, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN, timeouts, errors };
    },
  };
}

/** Issues `count` free keys in the database, through the measured checkout's own compiled key service. */
function issueKeys(root: string, databaseUrl: string, count: number): string[] {
  const script = `
    const path = require('node:path');
    const load = (m) => require(path.join(${JSON.stringify(root)}, 'dist/src', m));
    (async () => {
      const storage = await load('service/storage/open-storage').openStorage(process.env.DATABASE_URL);
      const { issueApiKey } = load('service/keys/key-service');
      for (let i = 0; i < ${count}; i++) console.log((await issueApiKey(storage.apiKeys, { plan: 'free', label: 'attacker ' + i })).key);
      await storage.close();
    })();`;
  const keys = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, DATABASE_URL: databaseUrl } })
    .toString()
    .trim()
    .split('\n');
  if (keys.length !== count) throw new Error(`issued ${keys.length} keys, not ${count}`);
  return keys;
}

/** Counts how a set of requests went: by status, and how their bodies ended. */
class Tally {
  readonly counts: Record<string, number> = {};
  add(what: string): void {
    this.counts[what] = (this.counts[what] ?? 0) + 1;
  }
}

/** One small body of items, read by the server's import. */
async function warmImport(baseUrl: string, key: string): Promise<void> {
  const response = await fetch(`${baseUrl}/v3/books/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/jsonl' },
    body: '{"id":1,"title":"Dune"}\n{"id":2,"title":"Emma"}\n',
  });
  if (response.status !== 200) throw new Error(`the import answered ${response.status}: ${await response.text()}`);
}

/** `count` exports at once from one key, each read as fast as it comes; at most 60 s. */
async function exportsAtOnce(baseUrl: string, key: string, count = 60): Promise<Record<string, number | string>> {
  const tally = new Tally();
  const requests: http.ClientRequest[] = [];
  await Promise.race([
    Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<void>((resolve) => {
            const request = http.get(`${baseUrl}/v2/pets/export`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
              tally.add(`status ${response.statusCode}`);
              response.resume();
              response.on('end', () => {
                if (response.statusCode === 200) tally.add('complete');
                resolve();
              });
              response.on('error', () => {
                tally.add('cut');
                resolve();
              });
            });
            request.on('error', () => {
              tally.add('error');
              resolve();
            });
            requests.push(request);
          }),
      ),
    ),
    sleep(60_000),
  ]);
  for (const request of requests) request.destroy();
  return tally.counts;
}

/**
 * A chunked POST of JSON Lines to v3's import over a socket of its own (headers sent, body to follow): `ended` is
 * told once how it ended: the server's answer, its closing the connection, or `withinMs` passing.
 */
function openImport(port: number, key: string, withinMs: number, ended: (what: string) => void): { socket: net.Socket; isOpen(): boolean } {
  const socket = net.connect({ host: HOST, port });
  socket.setNoDelay(true);
  let answered = '';
  let open = true;
  const end = (what: string): void => {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    socket.destroy();
    ended(what);
  };
  const timer = setTimeout(() => end(`still open after ${withinMs / 1000} s`), withinMs);
  socket.on('data', (data: Buffer) => {
    answered += data.toString('latin1');
    const status = /^HTTP\/1\.1 (\d{3})/.exec(answered)?.[1];
    if (status) end(`answered ${status}`);
  });
  socket.on('close', () => end('closed by the server'));
  socket.on('error', () => end('closed by the server'));
  socket.write(
    `POST /v3/books/import HTTP/1.1\r\nHost: ${HOST}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
      'Content-Type: application/jsonl\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  return { socket, isOpen: () => open };
}

/** Opens `count` imports at once (`open` sends each body); what each got, and after how long. */
async function imports(count: number, open: (index: number, ended: (what: string) => void) => void): Promise<Record<string, number | string>> {
  const tally = new Tally();
  const ended: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from(
      { length: count },
      (_, index) =>
        new Promise<void>((resolve) =>
          open(index, (what) => {
            tally.add(what);
            ended.push((performance.now() - started) / 1000);
            resolve();
          }),
        ),
    ),
  );
  return { ...tally.counts, 'ended after (s)': ended.map((seconds) => seconds.toFixed(1)).join(', ') };
}

/** 4 bodies trickled one byte at a time (10 a millisecond) after a long first line, 30 s (or until the server answers). */
function trickle(port: number, keys: string[]): Promise<Record<string, number | string>> {
  const first = `{"id":1,"title":"${'é'.repeat(500_000)}`;
  return imports(keys.length, (index, ended) => {
    let timer: NodeJS.Timeout | undefined;
    const request = openImport(port, keys[index]!, 30_000, (what) => {
      clearInterval(timer);
      ended(what);
    });
    request.socket.write(`${Buffer.byteLength(first).toString(16)}\r\n${first}\r\n`);
    timer = setInterval(() => {
      for (let byte = 0; byte < 10 && request.isOpen(); byte++) request.socket.write('1\r\nx\r\n');
    }, 1);
  });
}

/**
 * `bodies` chunked JSON Lines bodies sent at once by one key, each `mib` MiB of `line` repeated, written as fast as
 * the server reads them, until it answers; at most 60 s.
 */
function sendBodies(port: number, key: string, bodies: number, mib: number, line: string): Promise<Record<string, number | string>> {
  const chunk = Buffer.from(line.repeat(Math.floor(65_536 / line.length)));
  const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  const chunks = Math.ceil((mib * 1_048_576) / chunk.length);
  return imports(bodies, (_, ended) => {
    const request = openImport(port, key, 60_000, ended);
    let sent = 0;
    const send = (): void => {
      while (request.isOpen() && sent < chunks) {
        sent++;
        if (!request.socket.write(framed)) {
          request.socket.once('drain', send);
          return;
        }
      }
      if (request.isOpen() && sent === chunks) request.socket.write('0\r\n\r\n');
    };
    send();
  });
}

/** 120 exports, each of its own key, whose readers take the headers and stop reading; 60 s. */
async function stalledReaders(server: ServerProcess, keys: string[]): Promise<Record<string, number | string>> {
  const { baseUrl } = server;
  const tally = new Tally();
  const requests = keys.map((key) => {
    const request = http.get(`${baseUrl}/v2/pets/export`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
      tally.add(`status ${response.statusCode}`);
      if (response.statusCode !== 200) {
        response.resume();
        return;
      }
      response.pause();
    });
    request.on('error', () => tally.add('error'));
    return request;
  });
  await sleep(60_000);
  // A paused client does not see its connection cut until it reads again: the server's count says what it cut.
  const metrics = await scrapeMetrics(server);
  for (const request of requests) request.destroy();
  return { ...tally.counts, 'cut by the server as stalled within 60 s': metrics?.('pas_streams_total', 'end="stalled"') ?? 'unknown' };
}

/** One export read 256 KiB every 25 s until the server cuts it (its count of cut streams says when, to 5 s); at most 330 s. */
async function slowReader(server: ServerProcess, key: string): Promise<Record<string, number | string>> {
  const started = performance.now();
  let read = 0;
  const request = http.get(`${server.baseUrl}/v2/pets/export`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
    response.pause();
    const take = (): void => {
      let taken = 0;
      for (let chunk = response.read(16_384) as Buffer | null; chunk !== null && taken < 262_144; chunk = response.read(16_384) as Buffer | null) {
        taken += chunk.length;
      }
      read += taken;
    };
    const timer = setInterval(take, 25_000);
    response.socket.once('close', () => clearInterval(timer));
  });
  request.on('error', () => undefined);
  try {
    while (performance.now() - started < 330_000) {
      await sleep(5_000);
      // A paused client sees its connection cut only when it reads past what its buffers hold: the server says.
      const metrics = await scrapeMetrics(server);
      for (const end of ['stalled', 'max_duration']) {
        if ((metrics?.('pas_streams_total', `end="${end}"`) ?? 0) >= 1) {
          return { 'cut by the server as': end, 'after (s)': ((performance.now() - started) / 1000).toFixed(0), 'bytes read': read };
        }
      }
    }
    return { 'not cut within (s)': 330, 'bytes read': read };
  } finally {
    request.destroy();
  }
}

async function run(scenario: Scenario, root: string, database: ProjectDatabase, keys: string[]): Promise<Outcome> {
  const spec =
    scenario === 'trickle' || scenario === 'blank-lines' || scenario === 'tiny-items'
      ? {
          ...projectSpec(scenario, scenario, database, SERVER_NODE_FLAGS, root),
          args: [...SERVER_NODE_FLAGS, path.join(ROOT, 'bench/servers/with-import.cjs')],
        }
      : projectSpec(scenario, scenario, database, SERVER_NODE_FLAGS, root);
  spec.env = { ...spec.env, BENCH_ROOT: root };
  const server = await ServerProcess.start(spec);
  try {
    // Warm up the probe's route and the attack's (its schemas are compiled on first use), then let the server settle.
    const warm = startProbes(server.baseUrl, database.key);
    if (spec.args.at(-1)!.endsWith('with-import.cjs')) await warmImport(server.baseUrl, database.key);
    else await exportsAtOnce(server.baseUrl, database.key, 1);
    await sleep(2_000);
    await warm.stop();
    await sleep(2_000);
    const restMb = rssMb(server.pid) ?? Number.NaN;
    const peak = new PeakRss(server.pid);
    const probes = startProbes(server.baseUrl, database.key);
    const started = performance.now();
    const attack =
      scenario === 'exports'
        ? await exportsAtOnce(server.baseUrl, keys[0]!)
        : scenario === 'trickle'
          ? await trickle(server.port, keys.slice(1, 5))
          : scenario === 'stalled'
            ? await stalledReaders(server, keys.slice(5, 125))
            : scenario === 'blank-lines'
              ? await sendBodies(server.port, keys[126]!, 10, 100, '\n')
              : scenario === 'tiny-items'
                ? await sendBodies(server.port, keys[127]!, 1, 100, '{"id":1,"title":"x"}\n')
                : await slowReader(server, keys[125]!);
    const seconds = (performance.now() - started) / 1000;
    // Probed for 10 s at least, so an attack that ends at once is judged on as many probes as the rest, aftermath included.
    await sleep(Math.max(0, MIN_PROBE_MS - (performance.now() - started)));
    const probed = await probes.stop();
    const peakMb = peak.stop() ?? Number.NaN;
    server.assertAlive();
    return { scenario, seconds, probes: probed, restMb, peakMb, growthMb: peakMb - restMb, attack };
  } finally {
    await server.stop();
  }
}

const metTargets = (outcome: Outcome): boolean => outcome.probes.p99 < 100 && outcome.probes.timeouts === 0 && outcome.growthMb < 50;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pets: { type: 'string', default: '200000' },
      root: { type: 'string', default: ROOT },
      label: { type: 'string' },
      scenario: { type: 'string', multiple: true },
      'slow-reader': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const root = path.resolve(values.root);
  const scenarios: Scenario[] = [...((values.scenario as Scenario[] | undefined) ?? SCENARIOS), ...(values['slow-reader'] ? (['slow-reader'] as const) : [])];
  const commit = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD']).toString().trim();
  if (!values['no-build']) await runCommand('npm', ['run', 'build'], { inheritOutput: true, cwd: root });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-hostile-'));
  const outcomes: Outcome[] = [];
  try {
    const pets = Number(values.pets);
    console.log(`seeding ${pets.toLocaleString('en-US')} pets and 128 keys...`);
    const database = await prepareProjectDatabase(scratch, 'hostile', pets, root);
    const keys = issueKeys(root, database.databaseUrl, 128);
    for (const scenario of scenarios) {
      console.log(`${scenario}...`);
      const outcome = await run(scenario, root, database, keys);
      outcomes.push(outcome);
      console.log(
        `  probes: ${outcome.probes.count}, p50 ${outcome.probes.p50.toFixed(1)} ms, p99 ${outcome.probes.p99.toFixed(1)} ms, ` +
          `max ${outcome.probes.max.toFixed(1)} ms, ${outcome.probes.timeouts} timed out; RSS ${outcome.restMb.toFixed(1)} -> ${outcome.peakMb.toFixed(1)} MB ` +
          `(+${outcome.growthMb.toFixed(1)}); ${JSON.stringify(outcome.attack)}`,
      );
    }
  } finally {
    killAllServers();
    rmSync(scratch, { recursive: true, force: true });
  }
  const name = values.label ? `hostile-${values.label}` : 'hostile';
  const lines = [
    `# Hostile clients of streams — ${new Date().toISOString()}, ${commit}, Node ${process.version}`,
    '',
    `The server as \`npm start\` runs it in production (SQLite, one process) with ${Number(values.pets).toLocaleString('en-US')} pets; another key probes`,
    `\`GET /v2/pets?limit=1\` every ${PROBE_INTERVAL_MS} ms from ${PROBE_ADDRESS}, each probe given ${PROBE_TIMEOUT_MS / 1000} s. Targets: p99 under 100 ms, no time-out, RSS growth under 50 MB.`,
    '',
    '| attack | seconds | probes | p50 ms | p99 ms | max ms | timed out | RSS at rest MB | peak MB | growth MB | targets | what the attack got |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...outcomes.map(
      (o) =>
        `| ${o.scenario} | ${o.seconds.toFixed(0)} | ${o.probes.count} | ${o.probes.p50.toFixed(1)} | ${o.probes.p99.toFixed(1)} | ${o.probes.max.toFixed(1)} | ${o.probes.timeouts} | ` +
        `${o.restMb.toFixed(1)} | ${o.peakMb.toFixed(1)} | ${o.growthMb.toFixed(1)} | ${metTargets(o) ? 'met' : 'missed'} | ` +
        `${Object.entries(o.attack)
          .map(([what, count]) => `${what}: ${count}`)
          .join('; ')} |`,
    ),
    '',
  ];
  writeFileSync(path.join(ROOT, `bench/results/${name}.md`), lines.join('\n'));
  writeFileSync(path.join(ROOT, `bench/results/${name}.json`), `${JSON.stringify({ commit, pets: Number(values.pets), outcomes }, null, 2)}\n`);
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  killAllServers();
  process.exit(1);
});
