import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

/**
 * Every row of `table` as the database itself holds it, read past the app's
 * storage layer (which maps and may leave out columns): better-sqlite3 on the
 * file of a `sqlite:PATH` URL, or `pg` on a `postgres://...[?schema=NAME]` URL
 * (the schema a test app was given, see support/backend.ts).
 *
 * @example const rows = await rawRows(t.databaseUrl, 'api_keys');
 */
export async function rawRows(databaseUrl: string, table: string): Promise<Record<string, unknown>[]> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a plain table name: ${table}`);
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(`select * from "${table}"`).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  return withPostgres(databaseUrl, async (client) => (await client.query(`select * from "${table}"`)).rows as Record<string, unknown>[]);
}

/** A `pg` client on a `postgres://...[?schema=NAME]` URL, its search path the schema a test app was given. */
async function withPostgres<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  if (schema !== null && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    if (schema) await client.query(`set search_path to "${schema}"`);
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A column's value as text, whatever its type (a BLOB in both of its readings). */
export const columnText = (value: unknown): string =>
  Buffer.isBuffer(value) ? `${value.toString('latin1')} ${value.toString('hex')}` : value instanceof Date ? value.toISOString() : String(value);

/**
 * Runs one statement past the app's storage layer, as `rawRows` reads: to
 * plant what no request can make (a corrupted row), and see a check find it.
 * Parameters are `?` on both backends.
 *
 * @example await rawExecute(t.databaseUrl, "update pets set status = 'available' where id = ?", [7]);
 */
export async function rawExecute(databaseUrl: string, statement: string, parameters: unknown[] = []): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { fileMustExist: true });
    try {
      db.prepare(statement).run(...parameters);
    } finally {
      db.close();
    }
    return;
  }
  let index = 0;
  await withPostgres(databaseUrl, (client) =>
    client.query(
      statement.replace(/\?/g, () => `$${++index}`),
      parameters,
    ),
  );
}
