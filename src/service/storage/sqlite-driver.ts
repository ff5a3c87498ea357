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
  sql: string;
  /** Undefined when it could not be prepared yet (a table a write before it in the turn creates): prepared when its turn commits. */
  statement: BetterSqlite3.Statement | undefined;
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
 * A Kysely transaction or stream has the connection alone: the writes
 * waiting commit first, and every other query, read or write, waits until it
 * ends (as with Kysely's own SQLite driver, a query through `db` rather than
 * the transaction's `trx` waits for the transaction, so inside one use `trx`).
 *
 * @example const statements = new SqliteStatements(connection, prepare); const rows = await statements.rows(compiledQuery);
 */
export class SqliteStatements {
  private pending: PendingWrite[] = [];
  /** Set while a transaction or a stream has the connection alone; settles when it ends. */
  private aloneUntil: Promise<void> | undefined;
  private releaseAlone: (() => void) | undefined;

  constructor(
    private readonly connection: BetterSqlite3.Database,
    private readonly prepare: PrepareStatement,
  ) {}

  /**
   * Runs a query outside any transaction and gives its rows: a read of the
   * repositories' prepared queries costs one promise; anything else goes the
   * way of `execute`.
   */
  rows<R>(query: CompiledQuery<R>): Promise<R[]> {
    const statement = this.aloneUntil ? undefined : this.preparedOrUndefined(query.sql);
    if (statement?.readonly) {
      try {
        return Promise.resolve(statement.all(query.parameters as unknown[]) as R[]);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.execute<R>(query, false).then((result) => result.rows);
  }

  /**
   * Runs a query: at once when it reads or runs in the open transaction, else
   * with the writes of this turn. Outside a transaction, a query that cannot
   * be prepared yet may name what a write queued before it creates: it runs
   * in its turn, after that write.
   */
  execute<R>(query: CompiledQuery, inTransaction: boolean): Promise<QueryResult<R>> {
    if (!inTransaction && this.aloneUntil) return this.aloneUntil.then(() => this.execute<R>(query, false));
    const parameters = query.parameters as unknown[];
    const statement = this.preparedOrUndefined(query.sql);
    if (!inTransaction && !statement?.readonly) return this.write<R>(query.sql, statement, parameters);
    try {
      return Promise.resolve(run(statement ?? this.prepare(query.sql), parameters) as QueryResult<R>);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Streams a select's rows (the caller has the connection alone: better-sqlite3 runs nothing else while a statement iterates). */
  *iterate<R>(query: CompiledQuery): Generator<R> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams only select queries');
    yield* this.prepare(query.sql).iterate(query.parameters as unknown[]) as Iterable<R>;
  }

  /**
   * Waits until nothing else has the connection alone, commits the writes
   * waiting, and gives the connection to the caller alone until it calls the
   * function returned.
   */
  async takeAlone(): Promise<() => void> {
    while (this.aloneUntil) await this.aloneUntil;
    this.commitPending();
    let release!: () => void;
    const until = new Promise<void>((resolve) => {
      release = () => {
        if (this.aloneUntil === until) this.aloneUntil = undefined;
        if (this.releaseAlone === release) this.releaseAlone = undefined;
        resolve();
      };
    });
    this.aloneUntil = until;
    this.releaseAlone = release;
    return release;
  }

  /**
   * Commits the writes waiting and closes the connection. A transaction still
   * open is rolled back, and the queries waiting for it then fail, as every
   * query after closing does.
   */
  close(): void {
    this.commitPending();
    try {
      if (this.connection.inTransaction) this.connection.exec('rollback');
    } catch {}
    this.connection.close();
    this.releaseAlone?.();
  }

  private preparedOrUndefined(sql: string): BetterSqlite3.Statement | undefined {
    try {
      return this.prepare(sql);
    } catch {
      return undefined;
    }
  }

  private write<R>(sql: string, statement: BetterSqlite3.Statement | undefined, parameters: unknown[]): Promise<QueryResult<R>> {
    if (this.pending.length === 0) setImmediate(this.commitPending);
    return new Promise((resolve, reject) => {
      this.pending.push({ sql, statement, parameters, resolve: resolve as PendingWrite['resolve'], reject });
    });
  }

  private readonly commitPending = (): void => {
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.commit(batch);
  };

  private commit(batch: PendingWrite[]): void {
    const connection = this.connection;
    let done: { write: PendingWrite; result: QueryResult<unknown> }[] = [];
    const failAll = (writes: PendingWrite[], error: unknown) => {
      for (const write of writes) write.reject(error);
    };
    const uncommitted = () => done.map((entry) => entry.write);
    // A transaction a failed commit left open holds only writes already refused: it must not commit with these.
    if (connection.inTransaction) {
      try {
        connection.exec('rollback');
      } catch (error) {
        failAll(batch, error);
        return;
      }
    }
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
        done.push({ write, result: run(write.statement ?? this.prepare(write.sql), write.parameters) });
      } catch (error) {
        write.reject(error);
        if (!connection.inTransaction) {
          failAll(uncommitted(), error);
          done = [];
        }
      }
    }
    if (!connection.inTransaction) return;
    try {
      connection.exec('commit');
    } catch (error) {
      failAll(uncommitted(), error);
      try {
        if (connection.inTransaction) connection.exec('rollback');
      } catch {}
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
 * @example const db = new Kysely<Database>({ dialect: sqliteDialect(new SqliteStatements(connection, prepare)) });
 */
export function sqliteDialect(statements: SqliteStatements): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new SqliteDriver(statements),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/**
 * A transaction (the server opens none; Kysely's migrator may) has the
 * connection alone from its `begin` to its `commit` or `rollback` (see
 * `SqliteStatements.takeAlone`).
 */
class SqliteDriver implements Driver {
  constructor(private readonly statements: SqliteStatements) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteConnection(this.statements);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const release = await this.statements.takeAlone();
    try {
      await this.statements.execute(CompiledQuery.raw('begin'), true);
    } catch (error) {
      release();
      throw error;
    }
    (connection as SqliteConnection).transaction = release;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed commit is followed by Kysely's rollback, which ends the transaction.
    await connection.executeQuery(CompiledQuery.raw('commit'));
    (connection as SqliteConnection).endTransaction();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      (connection as SqliteConnection).endTransaction();
    }
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.statements.close();
  }
}

class SqliteConnection implements DatabaseConnection {
  /** While this connection's transaction is open: gives the connection back. */
  transaction: (() => void) | undefined;

  constructor(private readonly statements: SqliteStatements) {}

  endTransaction(): void {
    const release = this.transaction;
    this.transaction = undefined;
    release?.();
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.statements.execute<R>(query, this.transaction !== undefined);
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const release = this.transaction ? undefined : await this.statements.takeAlone();
    try {
      for (const row of this.statements.iterate<R>(query)) yield { rows: [row] };
    } finally {
      release?.();
    }
  }
}
