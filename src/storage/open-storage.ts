import type { Storage } from './storage';
import { KyselyStorage } from './kysely-storage';
import { migrateToLatest } from './migrations';
import { openSqlite, sqliteFlavor } from './sqlite-backend';

/** Default database: an SQLite file under the working directory. */
export const DEFAULT_DATABASE_URL = 'sqlite:data/pets.db';

/**
 * Opens the database named by a `DATABASE_URL` and migrates it to the latest
 * schema. Supported: `sqlite:PATH` (relative to the working directory) and
 * `sqlite::memory:`.
 *
 * @example const storage = await openStorage('sqlite:data/pets.db');
 */
export async function openStorage(databaseUrl: string = DEFAULT_DATABASE_URL): Promise<Storage> {
  const [scheme] = databaseUrl.split(':', 1);
  switch (scheme) {
    case 'sqlite': {
      const db = openSqlite(databaseUrl.slice('sqlite:'.length));
      try {
        await migrateToLatest(db, sqliteFlavor);
      } catch (error) {
        await db.destroy();
        throw error;
      }
      return new KyselyStorage('sqlite', db);
    }
    default:
      throw new Error(`DATABASE_URL: unsupported scheme "${scheme}:" (expected sqlite:PATH)`);
  }
}
