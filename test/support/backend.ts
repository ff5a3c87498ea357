/**
 * Which backend this jest project runs the API suites on (see jest.config.ts):
 * `sqlite` (the embedded default) or `postgres` (PostgreSQL + Redis, from
 * DATABASE_URL and REDIS_URL).
 */
import { randomBytes } from 'node:crypto';

export type TestBackend = 'sqlite' | 'postgres';
export const TEST_BACKEND: TestBackend = process.env['TEST_BACKEND'] === 'postgres' ? 'postgres' : 'sqlite';

export const POSTGRES_URL = process.env['DATABASE_URL']?.startsWith('postgres') ? process.env['DATABASE_URL'] : undefined;
export const REDIS_URL = process.env['REDIS_URL'];

/** A name unique to one test app: its PostgreSQL schema and Redis key prefix. */
export const isolationName = (): string => `t_${randomBytes(6).toString('hex')}`;

/** The shared PostgreSQL database, in a schema of its own. */
export function isolatedPostgresUrl(name: string): string {
  if (!POSTGRES_URL) throw new Error('DATABASE_URL (postgres://...) is not set');
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', name);
  // Two jest workers, spawned servers and PostgreSQL share two cores: a new connection may take longer than production's 2 s.
  url.searchParams.set('connect_timeout', '15');
  return url.toString();
}
