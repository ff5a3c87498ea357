import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/** A prepared statement of the connection, for this SQL (statements are cached by the caller). */
export type PrepareStatement = (sql: string) => BetterSqlite3.Statement;

interface PendingWrite {
  statement: BetterSqlite3.Statement;
  parameters: unknown[];
  resolve(result: QueryResult<unknown>): void;
  reject(error: unknown): void;
}

/**
 * Runs SQLite statements on the one connection. A read (a statement SQLite
 * reports read-only) runs at once, as in Kysely's own SQLite driver. A write
 * outside a transaction waits for the end of the event loop's turn and
 * commits with the others of that turn, in one transaction (group commit): a
 * commit appends the pages it changed to the WAL, and concurrent inserts
 * change the same few pages, so one commit for many writes a fraction of the
 * pages, and the checkpoint that syncs them comes as much less often. Each
 * write's promise settles once its transaction has committed, so what it
 * acknowledges is as durable as before.
 *
 * A write that fails (a unique violation) is undone alone and the others
 * commit; an error that ends the whole transaction (a full disk) fails the
 * writes it took with it. What SQLite refuses inside a transaction (VACUUM,
 * a checkpoint, the journal mode) belongs on the connection itself, as in
 * sqlite-backend.ts, not in a query.
 *
 * @example const statements = new SqliteStatements(connection, prepare); const rows = await statements.rows(compiledQuery);
 */
export class SqliteStatements {
  private pending: PendingWrite[] = [];
  private inTransaction = false;

  constructor(
    private readonly connection: BetterSqlite3.Database,
    private readonly prepare: PrepareStatement,
  ) {}

  /** Runs a query outside any transaction and gives its rows (the repositories' prepared queries: one promise per read). */
  rows<R>(query: CompiledQuery<R>): Promise<R[]> {
    try {
      const statement = this.prepare(query.sql);
      if (!statement.readonly) return this.write<R>(statement, query.parameters as unknown[]).then((result) => result.rows);
      return Promise.resolve(statement.all(query.parameters as unknown[]) as R[]);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Runs a query: at once when it reads or runs in the open transaction, else with the writes of this turn. */
  execute<R>(query: CompiledQuery, inTransaction: boolean): Promise<QueryResult<R>> {
    try {
      const statement = this.prepare(query.sql);
      const parameters = query.parameters as unknown[];
      if (!inTransaction && !statement.readonly) return this.write<R>(statement, parameters);
      return Promise.resolve(run(statement, parameters) as QueryResult<R>);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Streams a select's rows. */
  *iterate<R>(query: CompiledQuery): Generator<R> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams only select queries');
    yield* this.prepare(query.sql).iterate(query.parameters as unknown[]) as Iterable<R>;
  }

  /** Commits the writes waiting, for a transaction that begins (Kysely's, run alone) or the connection that closes. */
  commitPending(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.commit(batch);
  }

  /** While a transaction is open, writes from outside it wait for its end. */
  transactionOpen(open: boolean): void {
    this.inTransaction = open;
    if (!open && this.pending.length > 0) setImmediate(this.commitTurn);
  }

  private write<R>(statement: BetterSqlite3.Statement, parameters: unknown[]): Promise<QueryResult<R>> {
    if (this.pending.length === 0) setImmediate(this.commitTurn);
    return new Promise((resolve, reject) => {
      this.pending.push({ statement, parameters, resolve: resolve as PendingWrite['resolve'], reject });
    });
  }

  private readonly commitTurn = (): void => {
    if (!this.inTransaction) this.commitPending();
  };

  private commit(batch: PendingWrite[]): void {
    const connection = this.connection;
    let done: { write: PendingWrite; result: QueryResult<unknown> }[] = [];
    const failAll = (writes: PendingWrite[], error: unknown) => {
      for (const write of writes) write.reject(error);
    };
    for (let index = 0; index < batch.length; index++) {
      const write = batch[index]!;
      if (!connection.inTransaction) {
        try {
          connection.exec('begin immediate');
        } catch (error) {
          // The file stayed locked past the busy timeout: nothing of the rest can be written now.
          failAll(batch.slice(index), error);
          break;
        }
      }
      try {
        done.push({ write, result: run(write.statement, write.parameters) });
      } catch (error) {
        write.reject(error);
        if (!connection.inTransaction) {
          failAll(
            done.map(({ write }) => write),
            error,
          );
          done = [];
        }
      }
    }
    if (!connection.inTransaction) return;
    try {
      connection.exec('commit');
    } catch (error) {
      // A failed commit may leave the transaction open; a rollback that fails too changes nothing more.
      try {
        if (connection.inTransaction) connection.exec('rollback');
      } catch {}
      failAll(
        done.map(({ write }) => write),
        error,
      );
      return;
    }
    for (const { write, result } of done) write.resolve(result);
  }
}

/** A statement run to completion, its result as Kysely's own SQLite driver gives it. */
function run(statement: BetterSqlite3.Statement, parameters: unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
}

/**
 * Kysely's dialect for SQLite with group commit: the query compiler, adapter
 * and introspector are Kysely's own; the driver runs statements through
 * `SqliteStatements`.
 *
 * @example const db = new Kysely<Database>({ dialect: sqliteDialect(statements, () => connection.close()) });
 */
export function sqliteDialect(statements: SqliteStatements, close: () => void): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new SqliteDriver(statements, close),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/**
 * A transaction (the server opens none; Kysely's migrator may) runs alone:
 * the writes waiting commit first, and the queries of other callers wait
 * until it ends, so none of them runs inside it. Other queries run side by
 * side: a read is synchronous, and the writes are queued.
 */
class SqliteDriver implements Driver {
  private transactionEnded: Promise<void> | undefined;
  private endTransaction: (() => void) | undefined;

  constructor(
    private readonly statements: SqliteStatements,
    private readonly close: () => void,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteConnection(this.statements, () => this.transactionEnded);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    while (this.transactionEnded) await this.transactionEnded;
    this.transactionEnded = new Promise((resolve) => {
      this.endTransaction = resolve;
    });
    (connection as SqliteConnection).inTransaction = true;
    this.statements.commitPending();
    this.statements.transactionOpen(true);
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection as SqliteConnection).inTransaction) return;
    (connection as SqliteConnection).inTransaction = false;
    this.statements.transactionOpen(false);
    const end = this.endTransaction;
    this.transactionEnded = undefined;
    this.endTransaction = undefined;
    end?.();
  }

  async destroy(): Promise<void> {
    this.statements.commitPending();
    this.close();
  }
}

class SqliteConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    private readonly statements: SqliteStatements,
    private readonly openTransaction: () => Promise<void> | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.inTransaction) for (let open = this.openTransaction(); open; open = this.openTransaction()) await open;
    return this.statements.execute<R>(query, this.inTransaction);
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    for (const row of this.statements.iterate<R>(query)) yield { rows: [row] };
  }
}
