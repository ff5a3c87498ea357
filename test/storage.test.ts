import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { openStorage } from '../src/service/storage';
import { sqliteBackend } from '../src/service/storage';
import { startTestApp } from './support/test-app';
import { tempDir } from './support/paths';

describe('SQLite storage (the embedded default)', () => {
  it('keeps every pet and key across an app restart on the same file', async () => {
    const databaseUrl = `sqlite:${path.join(tempDir(), 'pets.db')}`;
    const first = await startTestApp({ databaseUrl });
    const created = [];
    for (const name of ['Rex', 'Tom', 'Kiki']) {
      created.push((await first.api.post('/v1/pets').set('Authorization', first.auth).send({ name, categoryId: 1 }).expect(201)).body);
    }
    await first.close();

    const second = await startTestApp({ databaseUrl });
    // The first app's key still works after the restart.
    const listed = await second.api.get('/v1/pets').set('Authorization', first.auth).expect(200);
    expect(listed.body).toEqual(created);
    // New ids continue after the old ones.
    const next = await second.api.post('/v1/pets').set('Authorization', second.auth).send({ name: 'New', categoryId: 1 }).expect(201);
    expect(next.body.id).toBeGreaterThan(created[2].id);
    await second.close();
  });

  it('uses WAL mode, records its migrations, and the status listing is served by the (status, id) index', async () => {
    const file = path.join(tempDir(), 'pets.db');
    const storage = await openStorage(`sqlite:${file}`);
    await storage.close();
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const migrations = db.prepare('select name from kysely_migration').all();
      expect(migrations).toEqual([
        { name: '0001_pets_and_api_keys' },
        { name: '0002_api_key_bans' },
        { name: '0003_idempotency_and_secrets' },
        { name: '0004_idempotency_owner_principal' },
        { name: '0005_idempotency_owner_declared_text' },
        { name: '0006_adoption' },
      ]);
      const plan = db
        .prepare<[], { detail: string }>("explain query plan select id from pets where status = 'sold' order by id limit 20")
        .all()
        .map((row) => row.detail)
        .join('\n');
      expect(plan).toContain('pets_status_id');
      expect(plan).not.toContain('TEMP B-TREE'); // no sort step
    } finally {
      db.close();
    }
  });

  it("keeps SQLite's page cache at SQLite's own default, not better-sqlite3's 16 MB (memory under sustained writes)", async () => {
    const backend = await sqliteBackend.open(`sqlite:${path.join(tempDir(), 'pets.db')}`);
    try {
      const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(backend.db);
      expect(rows[0]!.cache_size).toBe(-2_000);
    } finally {
      await backend.db.destroy();
    }
  });

  it('prepares the listings with a LIMIT SQLite does not re-plan on every run (never a bare `limit ?`)', async () => {
    // SQLite marks a statement whose LIMIT is a bare parameter to be planned again whenever a new value is
    // bound, and better-sqlite3 clears the bindings after each run: each listing was parsed and planned anew.
    const prepare = jest.spyOn(BetterSqlite3.prototype, 'prepare');
    const storage = await openStorage(`sqlite:${path.join(tempDir(), 'pets.db')}`);
    try {
      await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
      expect(await storage.pets.list({ limit: 5 })).toHaveLength(1);
      expect(await storage.pets.list({ limit: 5, status: 'available' })).toHaveLength(1);
      const listings = prepare.mock.calls.map(([source]) => source).filter((source) => /from "pets"/.test(source) && /\blimit\b/i.test(source));
      expect(listings).toHaveLength(2);
      for (const source of listings) expect(source).not.toMatch(/\blimit \?/i);
    } finally {
      prepare.mockRestore();
      await storage.close();
    }
  });

  it('opening an already migrated file runs no migration again and keeps the data', async () => {
    const url = `sqlite:${path.join(tempDir(), 'pets.db')}`;
    const storage = await openStorage(url);
    await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'sold' });
    await storage.close();
    const reopened = await openStorage(url);
    expect(await reopened.pets.list({ limit: 10 })).toEqual([{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }]);
    await reopened.close();
  });

  it('idempotency_keys.owner is declared text, also on a database the first 0004 migrated (its rows, ids, index and id high-water mark kept)', async () => {
    const file = path.join(tempDir(), 'pets.db');
    await (await openStorage(`sqlite:${file}`)).close();
    // The table as the first 0004 left it (before 0005 and 0006 ran): owners as text in a column declared bigint, one claim since purged (id 3).
    const db = new BetterSqlite3(file);
    db.exec(`drop table idempotency_keys;
      create table "idempotency_keys" ("id" integer primary key autoincrement, "owner" bigint not null, "key" text not null, "request_hash" text not null,
        "locked_until" text not null, "expires_at" text not null, "response_status" integer, "response_body" text, "created_at" text not null,
        constraint "idempotency_keys_owner_key" unique ("owner", "key"));
      create index "idempotency_keys_expires_at" on "idempotency_keys" ("expires_at");
      insert into idempotency_keys (id, owner, key, request_hash, locked_until, expires_at, created_at) values
        (1, 'key:1', 'a', 'h', 't', '2999-01-01', 't'), (2, 'token:alice', 'a', 'h', 't', '2999-01-01', 't'), (3, 'key:1', 'b', 'h', 't', '2999-01-01', 't');
      delete from idempotency_keys where id = 3;
      delete from kysely_migration where name = '0005_idempotency_owner_declared_text';
      drop table orders;
      alter table pets drop column version;
      alter table pets drop column status_source;
      alter table api_keys drop column role;
      delete from kysely_migration where name = '0006_adoption';`);
    const ownerType = () => db.prepare<[], { type: string }>("select type from pragma_table_info('idempotency_keys') where name = 'owner'").get()!.type;
    expect(ownerType()).toBe('bigint');
    db.close();

    const storage = await openStorage(`sqlite:${file}`);
    const next = await storage.idempotencyKeys.insert({
      owner: 'key:1',
      key: 'c',
      requestHash: 'h',
      lockedUntil: new Date(),
      expiresAt: new Date('2999-01-01'),
    });
    // The unique (owner, key) still holds.
    expect(
      await storage.idempotencyKeys.insert({ owner: 'key:1', key: 'a', requestHash: 'h', lockedUntil: new Date(), expiresAt: new Date('2999-01-01') }),
    ).toBeUndefined();
    await storage.close();
    expect(next).toBe(4);
    const after = new BetterSqlite3(file, { readonly: true });
    try {
      expect(after.prepare<[], { type: string }>("select type from pragma_table_info('idempotency_keys') where name = 'owner'").get()!.type.toLowerCase()).toBe(
        'text',
      );
      expect(after.prepare('select id, owner, key from idempotency_keys order by id').all()).toEqual([
        { id: 1, owner: 'key:1', key: 'a' },
        { id: 2, owner: 'token:alice', key: 'a' },
        { id: 4, owner: 'key:1', key: 'c' },
      ]);
      expect(after.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'idempotency_keys' and sql is not null").all()).toEqual([
        { name: 'idempotency_keys_expires_at' },
      ]);
    } finally {
      after.close();
    }
  });

  it('refuses a PostgreSQL connect_timeout that is not a whole number of seconds, before connecting', async () => {
    for (const bad of ['abc', '0', '1.5', '10000']) {
      await expect(openStorage(`postgres://nobody@127.0.0.1:1/none?connect_timeout=${bad}`)).rejects.toThrow(
        /connect_timeout "[^"]*" must be a whole number of seconds/,
      );
    }
  });

  it('refuses an unsupported DATABASE_URL', async () => {
    await expect(openStorage('mysql://localhost/pets')).rejects.toThrow(/unsupported scheme "mysql:"/);
  });

  it('ids are never reused, even after the newest pet row is deleted', async () => {
    const file = path.join(tempDir(), 'pets.db');
    const storage = await openStorage(`sqlite:${file}`);
    const pet = await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
    await storage.close();
    const db = new BetterSqlite3(file);
    db.prepare('delete from pets where id = ?').run(pet.id);
    db.close();
    const reopened = await openStorage(`sqlite:${file}`);
    expect((await reopened.pets.create({ name: 'Tom', categoryId: 1, status: 'available' })).id).toBeGreaterThan(pet.id);
    await reopened.close();
  });
});
