import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';
import { runThroughKysely, type Backend, type BackendKind } from './backend';

const INT8_OID = 20;

/** BIGINT (int8) as a JavaScript number; refuses values a number cannot hold exactly instead of rounding. */
function parseInt8(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new RangeError(`int8 value ${value} is outside the safe integer range`);
  return number;
}

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** How long a new connection may take before the request fails (503). */
const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;

/** Connections per instance. */
const POOL_SIZE = 10;

/**
 * Opens a pg pool behind Kysely. `DATABASE_URL` may carry `?schema=NAME`: the
 * schema is created if needed and used as the search path (tests use one
 * schema each; deployments may use it to share a database).
 *
 * No request waits forever: connecting times out after 2 s and a statement
 * after 5 s, and those failures become 503 responses.
 *
 * @example const backend = await postgresBackend.open('postgres://pets:pets@127.0.0.1/pets');
 */
export const postgresBackend: BackendKind = {
  open: openPostgres,
};

async function openPostgres(databaseUrl: string): Promise<Backend> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`DATABASE_URL: schema "${schema}" must be a lower-case SQL identifier`);
  }
  // libpq's own parameter, in seconds: how long a new connection may take (2 s by default).
  const connectTimeout = url.searchParams.get('connect_timeout');
  url.searchParams.delete('connect_timeout');
  if (connectTimeout !== null && !/^[1-9]\d{0,3}$/.test(connectTimeout)) {
    throw new Error(`DATABASE_URL: connect_timeout "${connectTimeout}" must be a whole number of seconds from 1 to 9999`);
  }
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: POOL_SIZE,
    connectionTimeoutMillis: connectTimeout === null ? DEFAULT_CONNECT_TIMEOUT_MS : Number(connectTimeout) * 1000,
    statement_timeout: 5_000,
    query_timeout: 6_000,
    ...(schema && { options: `-c search_path=${schema}` }),
    types,
  });
  // A client losing its connection (the server restarts) emits 'error'; with
  // no listener that would crash the process. Idle clients report on the pool,
  // checked-out ones on themselves; the query in flight fails anyway (-> 503).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (schema) {
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    } catch (error) {
      // Another instance creating it at the same moment is fine.
      if ((error as { code?: string }).code !== '23505') {
        await db.destroy();
        throw error;
      }
    }
  }
  return {
    name: 'postgres',
    db,
    addIdColumn: (table) => table.addColumn('id', 'bigint', (col) => col.primaryKey().generatedAlwaysAsIdentity()),
    retypeColumn: async (on, { table, column, type, using }) => {
      await sql`alter table ${sql.id(table)} alter column ${sql.id(column)} type ${sql.raw(type)} using ${sql.raw(using ?? `${column}::${type}`)}`.execute(on);
    },
    ...(schema && { migrationSchema: schema }),
    runPrepared: runThroughKysely(db),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
