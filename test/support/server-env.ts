import path from 'node:path';
import { isolatedPostgresUrl, isolationName, REDIS_URL, TEST_BACKEND } from './backend';
import { tempDir } from './paths';
import { runKeysCli } from './processes';

/**
 * Environment for a real server process (startServer) on this project's
 * backend, isolated from every other test: a fresh SQLite file, or a
 * PostgreSQL schema and a Redis key prefix of its own.
 *
 * @example const server = await startServer({ ...isolatedServerEnv(), NODE_ENV: 'production' });
 */
export function isolatedServerEnv(): Record<string, string> {
  if (TEST_BACKEND !== 'postgres') return { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` };
  const name = isolationName();
  return { DATABASE_URL: isolatedPostgresUrl(name), REDIS_URL: REDIS_URL!, REDIS_KEY_PREFIX: `pas:${name}:` };
}

/** Issues a key with the keys CLI against that environment's database; returns the key. */
export function createKeyWithCli(env: Record<string, string>, ...args: string[]): string {
  const result = runKeysCli(['create', ...args], env);
  if (result.status !== 0) throw new Error(`keys create failed: ${result.stderr}`);
  return result.stdout.trim();
}
