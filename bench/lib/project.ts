/** The project's server as the benchmarks start it: its database (a key, seeded pets), its flags, its environment; and the baselines. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { seedOrderablePets, seedPets } from '../seed';
import { ROOT, runCommand, type ServerSpec } from './processes';

export interface ProjectDatabase {
  file: string;
  databaseUrl: string;
  key: string;
  pets: number;
  /** The pets placeOrder orders, one each: ids first..first+count-1, every one available (none when count is 0). */
  orderable: { first: number; count: number };
  seedMs: number;
}

/**
 * A fresh SQLite file with an enterprise key whose limits are out of reach
 * (created, and the schema migrated, by the project's own keys CLI) and
 * `pets` pets inserted directly, then `orderable` available pets after them
 * for placeOrder.
 *
 * The key is a customer's (`--role customer`, the CLI's default, named so a
 * change of default cannot turn the bench into staff): placeOrder is a
 * customer's operation, and staff keys see and do more per request.
 */
export async function prepareProjectDatabase(directory: string, name: string, pets: number, projectRoot = ROOT, orderable = 0): Promise<ProjectDatabase> {
  const file = path.join(directory, `${name}.db`);
  const databaseUrl = `sqlite:${file}`;
  // An older checkout (--before) may predate roles: its CLI would refuse the option, and its keys have no role.
  const knowsRoles = /--role\b/.test(readFileSync(path.join(projectRoot, 'scripts/keys.ts'), 'utf8'));
  const stdout = await runCommand(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(projectRoot, 'scripts/keys.ts'),
      'create',
      '--plan',
      'enterprise',
      '--rpm',
      '100000000',
      '--rpd',
      '2000000000',
      ...(knowsRoles ? ['--role', 'customer'] : []),
      '--label',
      'bench',
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  const key = stdout.trim();
  if (!/^pas_[A-Za-z0-9_-]{43}$/.test(key)) throw new Error(`keys create printed no key: ${JSON.stringify(stdout)}`);
  const seedMs = seedPets(file, pets) + (orderable > 0 ? seedOrderablePets(file, pets + 1, orderable) : 0);
  return { file, databaseUrl, key, pets, orderable: { first: pets + 1, count: orderable }, seedMs };
}

/**
 * The Node flags `npm start` gives the server: those of package.json's start
 * script (`--enable-source-maps`, ...), with `config.serverNodeFlags` in place.
 */
export const SERVER_NODE_FLAGS: string[] = startScriptFlags();

function startScriptFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string }; config?: { serverNodeFlags?: string } };
  const flags = /\bnode ([^&]*?)\s*dist\/src\/server\.js/.exec(manifest.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json: the start script does not run "node ... dist/src/server.js": ${manifest.scripts.start}`);
  return flags
    .replaceAll('$npm_package_config_serverNodeFlags', manifest.config?.serverNodeFlags ?? '')
    .split(' ')
    .filter(Boolean);
}

/** Variables of this shell that would change what the server does; a user's `npm start` has none of them. */
const PROJECT_VARIABLES = ['LOG_LEVEL', 'LOG_FORMAT', 'VALIDATE_RESPONSES', 'REDIS_URL', 'WORKERS', 'METRICS_TOKEN', 'NODE_OPTIONS', 'OPENAPI_DIR'];

/** A token for GET /metrics, so the bench can read the server's event-loop delay; no request path reads it. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';

/**
 * The project's real server as it ships: compiled, `NODE_ENV=production` and
 * nothing else (info-level access log on, the default response sampling), the
 * Node flags of `npm start`, its log appended to `<database>.log` unless
 * `options.stdout` says otherwise. `options.env` adds variables (a scenario
 * such as `LOG_LEVEL=warn`).
 */
export function projectSpec(
  id: string,
  label: string,
  database: ProjectDatabase,
  nodeFlags: string[] = SERVER_NODE_FLAGS,
  projectRoot = ROOT,
  options: { env?: NodeJS.ProcessEnv; stdout?: ServerSpec['stdout'] } = {},
): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of PROJECT_VARIABLES) delete env[name];
  Object.assign(env, { NODE_ENV: 'production', DATABASE_URL: database.databaseUrl, METRICS_TOKEN: BENCH_METRICS_TOKEN }, options.env);
  const stdout = options.stdout ?? { file: database.file.replace(/\.db$/, `.${id.replace(/[^\w.-]/g, '_')}.log`) };
  return { id, label, args: [...nodeFlags, path.join(path.relative(ROOT, projectRoot), 'dist/src/server.js')], env, stdout };
}

export function baselineSpec(id: string, label: string, script: string, petsFile: string): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_PETS_FILE: petsFile, NODE_ENV: 'production' };
  delete env.NODE_OPTIONS;
  return { id, label, args: [path.join('bench', 'servers', script)], env };
}
