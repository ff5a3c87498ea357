import { statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { sqliteBackend } from '../src/service/storage';
import { KyselyStorage } from '../src/service/storage';
import { migrateToLatest } from '../src/service/storage';
import type { Database } from '../src/service/storage';
import type { Storage } from '../src/service/storage';
import { startTestApp } from './support/test-app';
import { tempDir } from './support/paths';

/** Frames appended to the WAL so far: it only grows until a checkpoint (at a thousand pages) starts it over. */
const walFrames = (file: string): number => {
  const observer = new BetterSqlite3(file, { readonly: true });
  const pageSize = observer.pragma('page_size', { simple: true }) as number;
  observer.close();
  // The WAL's 32-byte header, then per frame a 24-byte header and a page.
  return Math.floor((statSync(`${file}-wal`).size - 32) / (pageSize + 24));
};

const names = (file: string): string[] => {
  const observer = new BetterSqlite3(file, { readonly: true });
  try {
    return observer
      .prepare<[], { name: string }>('select name from pets order by id')
      .all()
      .map((row) => row.name);
  } finally {
    observer.close();
  }
};

const pet = (name: string) => ({ name, categoryId: 1, status: 'available' as const });

/** A migrated SQLite file, its storage and the Kysely instance behind it, closed after `test` (closing again is harmless). */
async function withStorage(test: (opened: { file: string; storage: Storage; db: Kysely<Database> }) => Promise<void>): Promise<void> {
  const file = path.join(tempDir(), 'pets.db');
  const backend = await sqliteBackend.open(`sqlite:${file}`);
  await migrateToLatest(backend);
  const storage = new KyselyStorage(backend);
  try {
    await test({ file, storage, db: backend.db });
  } finally {
    await storage.close();
  }
}

describe('SQLite writes: the writes of one turn of the event loop commit together (group commit)', () => {
  it('concurrent creates share one commit: the WAL grows by a few frames, not by a commit per pet', () =>
    withStorage(async ({ file, storage }) => {
      await storage.pets.create(pet('warm-up'));
      const alone = walFrames(file);
      for (const name of ['a', 'b', 'c', 'd', 'e']) await storage.pets.create(pet(name));
      const oneByOne = walFrames(file) - alone;
      // Each awaited create is its own commit: at least a frame (page) each.
      expect(oneByOne).toBeGreaterThanOrEqual(5);

      const before = walFrames(file);
      const created = await Promise.all(Array.from({ length: 50 }, (_, index) => storage.pets.create(pet(`pet ${index}`))));
      const together = walFrames(file) - before;
      // Fifty pets in the frames of about one commit (the pages it changed), where fifty commits would write fifty times that.
      expect(together).toBeLessThanOrEqual((2 * oneByOne) / 5);
      expect(created.map((p) => p.name)).toEqual(Array.from({ length: 50 }, (_, index) => `pet ${index}`));
      expect(new Set(created.map((p) => p.id)).size).toBe(50);
    }));

  it('a write is committed when its promise settles: another connection sees it at once', () =>
    withStorage(async ({ file, storage }) => {
      const [first, second] = await Promise.all([storage.pets.create(pet('Rex')), storage.pets.create(pet('Tom'))]);
      expect(names(file)).toEqual(['Rex', 'Tom']);
      expect(await storage.pets.get(first.id)).toEqual(first);
      expect(await storage.pets.get(second.id)).toEqual(second);
    }));

  it('a write that fails in a shared commit fails alone; the others of its turn are stored', () =>
    withStorage(async ({ file, storage }) => {
      // Two creates under the same idempotency claim in one turn: the unique column refuses the second.
      const outcomes = await Promise.allSettled([
        storage.pets.create(pet('before')),
        storage.pets.create(pet('claimed'), { request: 7 }),
        storage.pets.create(pet('claimed again'), { request: 7 }),
        storage.pets.create(pet('after')),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
      expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
      expect(names(file)).toEqual(['before', 'claimed', 'after']);
    }));

  it('when the disk is full, every acknowledged write is stored and every refused one is not', () =>
    withStorage(async ({ file, storage, db }) => {
      // A page limit just above the file's size stands in for a full disk (SQLITE_FULL).
      const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(db);
      await sql.raw(`pragma max_page_count = ${rows[0]!.page_count + 2}`).execute(db);
      const big = 'x'.repeat(1500);
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, index) => storage.pets.create(pet(`${index} ${big}`))));
      const stored = new Set(names(file));
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      for (const outcome of refused) expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_FULL' });
      expect(outcomes.map((_, index) => stored.has(`${index} ${big}`))).toEqual(outcomes.map((outcome) => outcome.status === 'fulfilled'));
    }));

  it('a write that ends the whole transaction fails the writes of its turn before it too; those after it are stored', () =>
    withStorage(async ({ file, storage }) => {
      // RAISE(ROLLBACK) undoes the whole transaction, as SQLite may on a full disk or an I/O error.
      const setup = new BetterSqlite3(file);
      setup.exec(`create trigger poison before insert on pets when new.name = 'poison' begin select raise(rollback, 'poisoned'); end`);
      setup.close();
      const outcomes = await Promise.allSettled(['a', 'b', 'poison', 'c', 'd'].map((name) => storage.pets.create(pet(name))));
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
      for (const outcome of outcomes.slice(0, 3)) expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/poisoned/);
      expect(names(file)).toEqual(['c', 'd']);
    }));

  it(
    'when another process holds the file locked past the busy timeout, the writes of the turn fail as SQLITE_BUSY (a 503) and none is stored',
    () =>
      withStorage(async ({ file, storage }) => {
        const holder = new BetterSqlite3(file);
        try {
          holder.exec('begin immediate');
          const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((name) => storage.pets.create(pet(name))));
          holder.exec('rollback');
          for (const outcome of outcomes) expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_BUSY' } });
          expect(names(file)).toEqual([]);
          // Once the lock is gone, writes go through again.
          await storage.pets.create(pet('d'));
          expect(names(file)).toEqual(['d']);
        } finally {
          holder.close();
        }
      }),
    20_000,
  );

  it('closing commits the writes still waiting for their turn', () =>
    withStorage(async ({ file, storage }) => {
      const created = storage.pets.create(pet('Last'));
      await storage.close();
      await expect(created).resolves.toMatchObject({ name: 'Last' });
      expect(names(file)).toEqual(['Last']);
    }));

  it('a transaction runs alone: writes waiting commit before it, writes made during it after it, none inside it', () =>
    withStorage(async ({ file, storage, db }) => {
      const before = storage.pets.create(pet('before'));
      let during: Promise<unknown> | undefined;
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('pets').values({ name: 'inside', category_id: 1, status: 'available', created_at: 'now' }).execute();
          during = storage.pets.create(pet('during'));
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await before;
      await during;
      // The rollback took only the transaction's own insert.
      expect(names(file)).toEqual(['before', 'during']);
    }));

  it('transactions one after another in one db.connection() each end, and the queries after them run', () =>
    withStorage(async ({ file, storage, db }) => {
      await db.connection().execute(async (connection) => {
        for (const name of ['first', 'second']) {
          await connection
            .transaction()
            .execute((trx) => trx.insertInto('pets').values({ name, category_id: 1, status: 'available', created_at: 'now' }).execute());
        }
        await storage.pets.create(pet('third'));
      });
      await storage.ping();
      expect(names(file)).toEqual(['first', 'second', 'third']);
    }));

  it("a read from outside a transaction waits for its end: it never sees the transaction's uncommitted rows", () =>
    withStorage(async ({ storage, db }) => {
      let read: Promise<unknown> | undefined;
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('pets').values({ id: 99, name: 'uncommitted', category_id: 1, status: 'available', created_at: 'now' }).execute();
          read = storage.pets.get(99);
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await expect(read).resolves.toBeUndefined();
    }));

  it('closing while a transaction is open rolls it back, and the writes waiting for it fail rather than hang', () =>
    withStorage(async ({ file, storage, db }) => {
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const transaction = db.transaction().execute(async (trx) => {
        await trx.insertInto('pets').values({ name: 'inside', category_id: 1, status: 'available', created_at: 'now' }).execute();
        opened();
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
      await isOpen;
      const waiting = storage.pets.create(pet('waiting'));
      await storage.close();
      await expect(waiting).rejects.toThrow(/not open/);
      await expect(transaction).rejects.toThrow();
      expect(names(file)).toEqual([]);
    }));

  it('a stream has the connection alone: queries made while it is read wait for its end instead of failing', () =>
    withStorage(async ({ file, storage, db }) => {
      for (const name of ['a', 'b', 'c']) await storage.pets.create(pet(name));
      const streamed: string[] = [];
      const during: Promise<unknown>[] = [];
      for await (const row of db.selectFrom('pets').select('name').orderBy('id').stream()) {
        streamed.push(row.name);
        during.push(db.selectFrom('pets').select('id').execute());
        during.push(
          db
            .insertInto('pets')
            .values({ name: `after ${row.name}`, category_id: 1, status: 'available', created_at: 'now' })
            .execute(),
        );
        // Time for them to run, if they did not wait.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(during);
      expect(streamed).toEqual(['a', 'b', 'c']);
      expect(names(file)).toEqual(['a', 'b', 'c', 'after a', 'after b', 'after c']);
    }));

  it('a query that names a table created by a write queued in the same turn runs after that write', () =>
    withStorage(async ({ db }) => {
      const notes = db.withTables<{ notes: { text: string } }>();
      const [, inserted, read] = await Promise.all([
        notes.schema.createTable('notes').addColumn('text', 'text').execute(),
        notes.insertInto('notes').values({ text: 'hello' }).execute(),
        notes.selectFrom('notes').select('text').execute(),
      ]);
      expect(inserted[0]?.numInsertedOrUpdatedRows).toBe(1n);
      expect(read).toEqual([{ text: 'hello' }]);
    }));

  it('over HTTP, concurrent creates each get their own pet and 201', async () => {
    const app = await startTestApp({ databaseUrl: `sqlite:${path.join(tempDir(), 'pets.db')}` });
    try {
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          app.api
            .post('/v1/pets')
            .set('Authorization', app.auth)
            .send({ name: `Pet ${index}`, categoryId: 1 }),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(20).fill(201));
      const listed = await app.api.get('/v1/pets?limit=50').set('Authorization', app.auth).expect(200);
      expect(listed.body.map((p: { name: string }) => p.name).sort()).toEqual(responses.map((response) => response.body.name).sort());
    } finally {
      await app.close();
    }
  });
});
