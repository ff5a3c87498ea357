import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type CompiledQuery, type SqliteDatabase } from 'kysely';
import type { Database } from './schema';
import type { Backend, BackendKind } from './backend';

/** SQLite's page cache per connection, in KiB (SQLite's own default). */
const PAGE_CACHE_KIB = 2_000;

/**
 * Opens (creating it and its folder if needed) an SQLite file in WAL mode:
 * readers never block the writer, so the keys CLI can use the file while the
 * server runs. `:memory:` gives a private in-memory database.
 *
 * The queries the repositories compile at start run on their prepared
 * statement directly.
 *
 * @example const backend = await sqliteBackend.open('sqlite:data/pets.db');
 */
export const sqliteBackend: BackendKind = {
  open: async (databaseUrl) => openSqlite(databaseUrl.slice('sqlite:'.length)),
};

function openSqlite(file: string): Backend {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const connection = new BetterSqlite3(file);
  connection.pragma('journal_mode = WAL');
  // In WAL mode NORMAL keeps every committed transaction across a process
  // crash (kill -9); only an OS crash or power loss may drop the last ones.
  connection.pragma('synchronous = NORMAL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  // better-sqlite3 builds SQLite with a 16 MB page cache, which a growing
  // database fills within minutes and never gives back: it was most of the
  // server's memory growth under sustained writes. SQLite's own default is
  // plenty for the pages a request touches; the OS cache holds the rest.
  connection.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  const database = withStatementCache(connection);
  return {
    name: 'sqlite',
    db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }),
    addIdColumn: (table) => table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement()),
    // better-sqlite3 runs a statement synchronously to completion, and the
    // server opens no transactions, so Kysely's connection lock (a promise per
    // query) guards nothing here. Kysely still built and compiled the SQL.
    runPrepared: <R>(query: CompiledQuery<R>): Promise<R[]> => {
      try {
        return Promise.resolve(database.prepare(query.sql).all(query.parameters as unknown[]) as R[]);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
  };
}

/**
 * Kysely's SQLite driver prepares every query anew; the server runs a handful
 * of distinct SQL strings, so each is prepared once and reused (better-sqlite3
 * statements are reusable, and Kysely runs them synchronously).
 */
function withStatementCache(connection: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const MAX_STATEMENTS = 200;
  return {
    close: () => connection.close(),
    prepare: (sql: string) => {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= MAX_STATEMENTS) statements.clear();
        statement = connection.prepare(sql);
        statements.set(sql, statement);
      }
      return statement as unknown as ReturnType<SqliteDatabase['prepare']>;
    },
  };
}
