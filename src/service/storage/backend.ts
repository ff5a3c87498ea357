import type { CompiledQuery, CreateTableBuilder, Kysely } from 'kysely';
import type { Database } from './schema';
import type { PoolStats } from './storage';

/** Runs a query compiled at start (see `prepare` in kysely-storage.ts) and returns its rows. */
export type PreparedRunner = <R>(query: CompiledQuery<R>) => Promise<R[]>;

/**
 * An open database of one kind, as the repositories and migrations need it
 * (Kysely's `Dialect` is the model: one small object per kind of database,
 * and nothing above it knows which). Everything that differs between SQLite
 * and PostgreSQL lives behind it; the SQL itself is the same.
 *
 * @example const backend = await sqliteBackend.open('sqlite:data/pets.db'); await migrateToLatest(backend);
 */
export interface Backend {
  /** `sqlite` or `postgres`: the label in metrics, logs and readiness. */
  readonly name: string;
  readonly db: Kysely<Database>;
  /** An auto-incrementing 64-bit primary key that is never reused. */
  addIdColumn(table: CreateTableBuilder<string>): CreateTableBuilder<string, 'id'>;
  /**
   * Changes a column's declared type, each row's value becoming `using` (an
   * SQL expression over the row, the column itself by default). PostgreSQL
   * alters the column; SQLite, which cannot, rebuilds the table with its rows,
   * ids, constraints and indexes.
   */
  retypeColumn(db: Kysely<unknown>, change: { table: string; column: string; type: 'text'; using?: string }): Promise<void>;
  /** The schema that holds the migrator's bookkeeping tables (PostgreSQL `?schema=`). */
  readonly migrationSchema?: string;
  /** How queries compiled at start run: on the driver's prepared statement where it has one. */
  readonly runPrepared: PreparedRunner;
  /** The connection pool's counts, where there is a pool. */
  poolStats?(): PoolStats;
}

/** Opens a backend for a `DATABASE_URL` (open-storage.ts picks the kind by the URL's scheme). */
export interface BackendKind {
  open(databaseUrl: string): Promise<Backend>;
}

/** Kysely's own executor: for backends without a faster path. */
export const runThroughKysely =
  (db: Kysely<Database>): PreparedRunner =>
  async (query) =>
    (await db.executeQuery(query)).rows;
