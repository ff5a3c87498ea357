import type { Storage } from './storage';
import { DEFAULT_DATABASE_URL } from '../../config';
import { KyselyStorage } from './kysely-storage';
import { migrateToLatest } from './migrations';
import { sqliteBackend } from './sqlite-backend';
import type { BackendKind } from './backend';
import type * as PostgresBackend from './postgres-backend';

/** PostgreSQL is loaded only when used: the embedded default never pays for pg. */
const postgres = (): BackendKind => (require('./postgres-backend') as typeof PostgresBackend).postgresBackend;
/** The kinds of database, by the URL scheme of `DATABASE_URL` (without the colon). */
const BACKENDS: Readonly<Record<string, () => BackendKind>> = { sqlite: () => sqliteBackend, postgres, postgresql: postgres };

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
  const kind = Object.hasOwn(BACKENDS, scheme!) ? BACKENDS[scheme!] : undefined;
  if (kind === undefined) throw new Error(`DATABASE_URL: unsupported scheme "${scheme}:" (expected sqlite:PATH or postgres://...)`);
  const backend = await kind().open(databaseUrl);
  try {
    await migrateToLatest(backend);
  } catch (error) {
    await backend.db.destroy();
    throw error;
  }
  return new KyselyStorage(backend);
}
