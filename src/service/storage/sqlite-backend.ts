import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { type PrepareStatement, SqliteStatements, sqliteDialect } from './sqlite-driver';
import type { Database } from './schema';
import type { Backend, BackendKind } from './backend';

/** SQLite's page cache per connection, in KiB (SQLite's own default). */
const PAGE_CACHE_KIB = 2_000;

/**
 * Opens (creating it and its folder if needed) an SQLite file in WAL mode:
 * readers never block the writer, so the keys CLI can use the file while the
 * server runs. `:memory:` gives a private in-memory database. The folders it
 * creates and the database files are its owner's only (`ownerOnly`).
 *
 * Reads run at once; the writes of one turn of the event loop commit together
 * (sqlite-driver.ts). The queries the repositories compile at start run on
 * their prepared statement directly.
 *
 * @example const backend = await sqliteBackend.open('sqlite:data/pets.db');
 */
export const sqliteBackend: BackendKind = {
  open: async (databaseUrl) => openSqlite(databaseUrl.slice('sqlite:'.length)),
};

function openSqlite(file: string): Backend {
  if (file !== ':memory:') ownerOnly(path.resolve(file));
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
  const statements = new SqliteStatements(connection, statementCache(connection));
  return {
    name: 'sqlite',
    db: new Kysely<Database>({ dialect: sqliteDialect(statements) }),
    retypeColumn: async (db, change) => rebuildWithColumnType(db, change),
    addIdColumn: (table) => table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement()),
    // Kysely built and compiled the SQL once; its driver would only add a promise or two per query.
    runPrepared: (query) => statements.rows(query),
  };
}

/**
 * The database holds the cursor secret, the key hashes and stored responses: whatever the umask,
 * the folders made for it are 0700 and its files 0600. A folder that was already there is left as it is.
 */
function ownerOnly(file: string): void {
  const folder = path.dirname(file);
  // mkdir's mode is masked by the umask; the first folder it made and those under it are set again.
  const first = mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (first !== undefined) for (let made = folder; made.startsWith(first); made = path.dirname(made)) chmodSync(made, 0o700);
  try {
    // Created here rather than by SQLite, which would create it as the umask allows. No descriptor is
    // opened on an existing file: closing it would drop the locks this process's connections hold on it.
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // SQLite gives the -wal and -shm it creates the database file's bits; those an older version left looser are tightened.
  for (const name of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    const mode = statSync(name, { throwIfNoEntry: false })?.mode;
    if (mode !== undefined && (mode & 0o777) !== 0o600) chmodSync(name, 0o600);
  }
}

/**
 * Kysely's SQLite driver prepares every query anew; the server runs a handful
 * of distinct SQL strings, so each is prepared once and reused (better-sqlite3
 * statements are reusable).
 */
function statementCache(connection: BetterSqlite3.Database): PrepareStatement {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const MAX_STATEMENTS = 200;
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= MAX_STATEMENTS) statements.clear();
      statement = connection.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

/**
 * SQLite's way to change a column's type (it has no ALTER COLUMN): the table
 * made again from its own CREATE statement with the column's new type, its
 * rows copied (ids and the AUTOINCREMENT high-water mark kept), the old table
 * dropped, the new one renamed, and its indexes made again. Run inside the migration's transaction.
 */
async function rebuildWithColumnType(
  db: Kysely<unknown>,
  { table, column, type, using }: { table: string; column: string; type: string; using?: string },
): Promise<void> {
  const { rows } = await sql<{ type: string; name: string; sql: string | null }>`select type, name, sql from sqlite_master where tbl_name = ${table}`.execute(
    db,
  );
  const created = rows.find((row) => row.type === 'table')?.sql;
  if (!created) throw new Error(`no table ${table} to change`);
  const declared = new RegExp(`("${column}"|\\b${column}\\b)\\s+\\w+`);
  if (!declared.test(created)) throw new Error(`no column ${column} in ${table}`);
  const rebuilt = `${table}__rebuilt`;
  const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((row) => row.name);
  const selected = columns.map((name) => (name === column ? `${using ?? `cast("${column}" as ${type})`} as "${column}"` : `"${name}"`)).join(', ');
  await sql.raw(created.replace(/^create table\s+("[^"]+"|\S+)/i, `create table "${rebuilt}"`).replace(declared, `"${column}" ${type}`)).execute(db);
  await sql.raw(`insert into "${rebuilt}" (${columns.map((name) => `"${name}"`).join(', ')}) select ${selected} from "${table}"`).execute(db);
  // AUTOINCREMENT's high-water mark goes with the table: an id given once (its row since deleted) is never given again.
  const { rows: sequence } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
  if (sequence[0]) await sql`update sqlite_sequence set seq = max(seq, ${sequence[0].seq}) where name = ${table}`.execute(db);
  for (const index of rows.filter((row) => row.type === 'index' && row.sql !== null)) await sql.raw(index.sql!).execute(db);
}
