/**
 * The runtime the project pins (devDependencies.node, Node 24 LTS) is the one
 * that runs it, an unsupported Node gets one line instead of a crash, and the
 * crash class that made the project abort on Node 24 with better-sqlite3 <= 12
 * (a statement finalized by an idle-time GC) stays fixed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { minimumVersion, unsupportedRuntime } from '../src/runtime';
import { runKeysCli, startServer } from './support/processes';
import { PROJECT_ROOT, tempDir } from './support/paths';

const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const PINNED = manifest.devDependencies['node']!;
const ENGINES = manifest.engines.node;

describe('the pinned runtime', () => {
  it('runs the tests: jest and its workers are on the Node of devDependencies.node', () => {
    expect(process.versions.node).toBe(PINNED);
    expect(unsupportedRuntime(PINNED, ENGINES)).toBeUndefined();
  });

  it('engines.node is ">=22.12": Node 22 and 24 LTS are supported, Node 20 and older 22s are not', () => {
    expect(minimumVersion(ENGINES)).toEqual([22, 12, 0]);
    for (const supported of ['22.12.0', '22.23.3', '24.0.0', 'v24.21.0', '25.1.0']) {
      expect(unsupportedRuntime(supported, ENGINES)).toBeUndefined();
    }
    for (const refused of ['20.20.2', 'v22.11.9', '18.0.0']) {
      expect(unsupportedRuntime(refused, ENGINES)).toMatch(/^pet-adoption-api needs Node\.js >=22\.12\.0 .*, but this is Node\.js v\S+ /);
    }
    expect(() => minimumVersion('^22 || ^24')).toThrow(/engines.node must be/);
  });

  it('the server and the keys CLI spawned by the tests run on it too', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, NODE_ENV: 'production' };
    const server = await startServer(env);
    expect(server.output()).toContain(`"node":"v${PINNED}"`);
    expect(await server.stop()).toBe(0);
    expect(runKeysCli(['list'], env).status).toBe(0);
  });
});

/** A Node on PATH outside node_modules/.bin that the project does not support (the system's Node 20 here), if any. */
function olderSystemNode(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (!dir || dir.includes('node_modules') || !existsSync(candidate)) continue;
    const version = nodeVersion(candidate);
    if (version && unsupportedRuntime(version, ENGINES)) return candidate;
  }
  return undefined;
}

const nodeVersion = (node: string): string | undefined =>
  spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 20_000 }).stdout?.trim() || undefined;

/** The unsupported Node installed from the registry when PATH has none (the last Node 20, as on this machine kind). */
const REGISTRY_NODE = '20.20.2';

/**
 * `node@VERSION` from the npm registry (the package scripts/test-on-node.sh
 * pins to run the suite on another Node; it brings the binary), installed once
 * into a cache folder under the system's temp folder and reused by later runs.
 * Throws with npm's output when it cannot be installed: the check never skips.
 */
function registryNode(version: string): string {
  const cache = path.join(os.tmpdir(), 'pet-adoption-api-node');
  const dir = path.join(cache, version);
  const node = path.join(dir, 'node_modules', '.bin', 'node');
  if (existsSync(node) && nodeVersion(node) === version) return node;
  mkdirSync(cache, { recursive: true });
  // Installed aside and renamed into place, so a run that stops half-way or a run beside this one never sees half an install.
  const staging = mkdtempSync(path.join(cache, `.install-${version}-`));
  chmodSync(staging, 0o755); // usable by later runs of other users
  // Not the npm settings of an `npm test` that started jest (its prefix, its script's flags).
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
  const npm = spawnSync('npm', ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node@${version}`], {
    encoding: 'utf8',
    env,
    timeout: 300_000,
  });
  const installed = path.join(staging, 'node_modules', '.bin', 'node');
  if (npm.status !== 0 || nodeVersion(installed) !== version) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `cannot install node@${version} from the npm registry (npm exit ${npm.status}, ${npm.error?.message ?? 'no spawn error'}):\n${npm.stdout}\n${npm.stderr}`,
    );
  }
  if (!(existsSync(node) && nodeVersion(node) === version)) {
    rmSync(dir, { recursive: true, force: true }); // a broken earlier install
    try {
      renameSync(staging, dir);
      return node;
    } catch (error) {
      if (!existsSync(node)) throw error;
    }
  }
  // Another run put one in place meanwhile: use theirs.
  rmSync(staging, { recursive: true, force: true });
  return node;
}

it('an unsupported Node gets one line and exit code 1 from the server and the keys CLI, not a crash', () => {
  // Never skipped: with no unsupported Node on PATH (a machine or CI image without a system Node 20), one comes from the registry.
  const oldNode = olderSystemNode() ?? registryNode(REGISTRY_NODE);
  const version = nodeVersion(oldNode)!;
  expect(unsupportedRuntime(version, ENGINES)).toMatch(/^pet-adoption-api needs Node\.js >=22\.12\.0/);
  console.log(`unsupported-runtime check on Node ${version} (${oldNode})`);
  const tsx = pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  for (const entry of ['src/server.ts', 'scripts/keys.ts']) {
    const result = spawnSync(oldNode, ['--import', tsx, path.join(PROJECT_ROOT, entry), 'list'], {
      cwd: tempDir(),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pet-adoption-api needs Node\.js >=22\.12\.0/)]);
  }
}, 330_000);

/**
 * Node 24.19+ aborted (SIGABRT in Statement::~Statement) when better-sqlite3
 * <= 12 statements were garbage-collected outside a JS context: at idle, or
 * while a later start ran on the same database. Each cycle: start, traffic
 * that drops prepared statements (migrations, key lookups, creates, lists),
 * idle with a GC every 500 ms (`--expose-gc`), then SIGTERM. The server must
 * never die on its own and must exit 0 each time.
 */
it('five start → traffic → idle with GC → SIGTERM cycles on one database never abort', async () => {
  const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  const idleMs = Number(process.env['IDLE_GC_MS'] ?? 6000);
  const gcWhileIdle = path.join(__dirname, 'support', 'gc-while-idle.cjs');
  let key = '';
  for (let cycle = 1; cycle <= 5; cycle++) {
    // The keys CLI opens the same file between server runs, as an operator would.
    if (cycle % 2 === 1) key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000'], env).stdout.trim();
    const server = await startServer({ ...env, LOG_LEVEL: 'info' }, { nodeArgs: ['--expose-gc', '--require', gcWhileIdle] });
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    try {
      for (let i = 1; i <= 40; i++) {
        const created = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ name: `cycle ${cycle}`, categoryId: i }) });
        expect(created.status).toBe(201);
        const { id } = (await created.json()) as { id: number };
        expect((await fetch(`${server.url}/v1/pets/${id}`, { headers })).status).toBe(200);
        expect((await fetch(`${server.url}/v1/pets?limit=${i}&status=available`, { headers })).status).toBe(200);
        expect((await fetch(`${server.url}/v1/pets?limit=0`, { headers })).status).toBe(400);
      }
      await new Promise((resolve) => setTimeout(resolve, idleMs));
      expect({ cycle, exitCode: server.child.exitCode, signal: server.child.signalCode }).toEqual({ cycle, exitCode: null, signal: null });
    } finally {
      const code = await server.stop('SIGTERM');
      expect({ cycle, code }).toEqual({ cycle, code: 0 });
    }
  }
  const stored = execFileSync(
    process.execPath,
    [
      '-e',
      `
    const db = new (require('better-sqlite3'))(${JSON.stringify(env.DATABASE_URL.slice('sqlite:'.length))}, { readonly: true });
    console.log(db.prepare('select count(*) as n from pets').get().n);`,
    ],
    { cwd: PROJECT_ROOT, encoding: 'utf8' },
  );
  expect(Number(stored)).toBe(5 * 40);
}, 180_000);

describe('the server\'s Node flags (package.json "config.serverNodeFlags")', () => {
  const { config, scripts } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    config: { serverNodeFlags: string };
    scripts: Record<string, string>;
  };
  const flags = config.serverNodeFlags.split(' ').filter(Boolean);

  it('cap the young generation, which held peak RSS over 150 MB under load (bench/results)', () => {
    expect(flags).toContain('--max-semi-space-size=4');
  });

  it('grow the old generation by half its live size between full collections (fewer full GCs under load, a lower first peak)', () => {
    expect(flags).toContain('--heap-growing-percent=50');
  });

  it('are all accepted by the pinned Node', () => {
    const out = execFileSync(process.execPath, [...flags, '-e', 'console.log("ok")'], { encoding: 'utf8' });
    expect(out.trim()).toBe('ok');
  });

  it('are what npm start, npm run mock and the container image run the server with', () => {
    for (const name of ['start', 'mock']) expect(scripts[name]).toMatch(/node [^&]*\$npm_package_config_serverNodeFlags dist\/src\/server\.js/);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(PROJECT_ROOT, 'deploy', 'Dockerfile'), 'utf8'))![1]!;
    const args = JSON.parse(cmd) as string[];
    expect(args.slice(args.indexOf('--enable-source-maps') + 1, args.indexOf('dist/src/server.js'))).toEqual(flags);
  });
});
