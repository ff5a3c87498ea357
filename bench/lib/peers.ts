/**
 * The peers: the same API doing the same work on other stacks, each built
 * from its own folder under bench/servers/ with its own package.json and
 * package-lock.json (exact versions), so no dependency, override or patch of
 * the project's reaches it. The bench installs a peer's packages itself
 * (`npm ci` in its folder) when they are missing or older than its lockfile.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ProjectDatabase } from './project';
import { bodyOf, requestHeaders, type Scenario } from './load';
import { ROOT, runCommand, type ServerProcess, type ServerSpec } from './processes';

export const PEERS = {
  'eov-peer': { label: 'eov-peer', folder: 'bench/servers/eov-peer', stack: 'Express 5 + express-openapi-validator + helmet + express-rate-limit + pino-http' },
  'fastify-peer': {
    label: 'fastify-peer',
    folder: 'bench/servers/fastify-peer',
    stack: 'Fastify 5 + fastify-openapi-glue + @fastify/helmet + @fastify/rate-limit + pino',
  },
} as const;

export type PeerId = keyof typeof PEERS;

/** Variables of this shell that would change what a peer's Node does. */
const PEER_VARIABLES = ['NODE_OPTIONS', 'OPENAPI_FILE'];

/**
 * Installs a peer's packages from its lockfile when its node_modules is
 * missing or older than the lockfile (npm writes node_modules/.package-lock.json
 * on every install). Returns whether it installed.
 */
export async function installPeer(id: PeerId): Promise<boolean> {
  const folder = path.join(ROOT, PEERS[id].folder);
  const lockfile = path.join(folder, 'package-lock.json');
  const installed = path.join(folder, 'node_modules', '.package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lockfile).mtimeMs) return false;
  console.log(`  npm ci in ${PEERS[id].folder} (its packages are not installed, or older than its lockfile)`);
  await runCommand('npm', ['ci', '--prefix', folder, '--no-audit', '--no-fund', '--loglevel=error'], { timeoutMs: 600_000 });
  return true;
}

/**
 * A peer as the bench runs it: `node bench/servers/<peer>/server.mjs` (no
 * flags, as its stack's docs run it), NODE_ENV=production, on the project's
 * database (the same pets, the same key), its access log appended to
 * `<database>.<id>.log`.
 */
export function peerSpec(id: PeerId, database: ProjectDatabase): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of PEER_VARIABLES) delete env[name];
  Object.assign(env, { NODE_ENV: 'production', DATABASE_FILE: database.file, ACCESS_LOG_FILE: peerLogFile(id, database) });
  return { id, label: PEERS[id].label, args: [path.join(PEERS[id].folder, 'server.mjs')], env };
}

/** Where a peer's access log goes. */
export const peerLogFile = (id: PeerId, database: ProjectDatabase): string => database.file.replace(/\.db$/, `.${id}.log`);

/** What every answer of the project carries, and so every peer's: the request id, the rate-limit headers, helmet's headers. */
const PER_REQUEST_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'content-security-policy',
  'strict-transport-security',
  'x-content-type-options',
];

/**
 * One request of `scenario`; throws unless the answer carries every header
 * the project sends on every answer (a peer without them would do less work
 * than the project, and its figures would flatter it).
 */
export async function assertPerRequestHeaders(server: ServerProcess, scenario: Scenario, key: string): Promise<void> {
  const body = bodyOf(scenario);
  const response = await fetch(server.baseUrl + scenario.path, {
    method: scenario.method,
    headers: requestHeaders(key, scenario),
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(5000),
  });
  await response.arrayBuffer();
  const missing = PER_REQUEST_HEADERS.filter((name) => !response.headers.has(name));
  if (missing.length) throw new Error(`${server.spec.label}, ${scenario.label}: no ${missing.join(', ')} header in its answer`);
}

/** The lines of a file (its newline bytes), read in chunks; 0 when it does not exist. */
export async function countLines(file: string): Promise<number> {
  if (!existsSync(file)) return 0;
  let lines = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) lines++;
  }
  return lines;
}
