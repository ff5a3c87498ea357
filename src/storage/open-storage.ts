import type { Storage } from './storage';
import { KyselyStorage, type PreparedRunner } from './kysely-storage';
import { migrateToLatest } from './migrations';
import { openSqlite, sqliteFlavor } from './sqlite-backend';
import type { Kysely } from 'kysely';
import type { Database } from './schema';
import type { SqlFlavor } from './migrations';
import type * as PostgresBackend from './postgres-backend';

/** Default database: an SQLite file under the working directory. */
export const DEFAULT_DATABASE_URL = 'sqlite:data/pets.db';

/**
 * Opens the database named by a `DATABASE_URL` and migrates it to the latest
 * schema (migrations take a lock, so instances may start together). Supported:
 * `sqlite:PATH` (relative to the working directory), `sqlite::memory:`, and
 * `postgres://user:password@host:port/database[?schema=NAME]`.
 *
 * @example const storage = await openStorage('sqlite:data/pets.db');
 */
export async function openStorage(databaseUrl: string = DEFAULT_DATABASE_URL): Promise<Storage> {
  const [scheme] = databaseUrl.split(':', 1);
  switch (scheme) {
    case 'sqlite': {
      const { db, runPrepared } = openSqlite(databaseUrl.slice('sqlite:'.length));
      return migrated('sqlite', db, sqliteFlavor, undefined, undefined, runPrepared);
    }
    case 'postgres':
    case 'postgresql': {
      // Loaded only when used: the embedded default never pays for pg.
      const { openPostgres, postgresFlavor } = require('./postgres-backend') as typeof PostgresBackend;
      const { db, schema, pool } = await openPostgres(databaseUrl);
      return migrated('postgres', db, postgresFlavor, schema, () => ({
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
      }));
    }
    default:
      throw new Error(`DATABASE_URL: unsupported scheme "${scheme}:" (expected sqlite:PATH or postgres://...)`);
  }
}

async function migrated(
  backend: string,
  db: Kysely<Database>,
  flavor: SqlFlavor,
  schema?: string,
  poolStats?: Storage['poolStats'],
  runPrepared?: PreparedRunner,
): Promise<Storage> {
  try {
    await migrateToLatest(db, flavor, schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new KyselyStorage(backend, db, undefined, poolStats, runPrepared);
}
