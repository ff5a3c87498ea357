import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { openStorage } from '../src/service/storage/open-storage';
import { sqliteBackend } from '../src/service/storage/sqlite-backend';
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

  it('opening an already migrated file runs no migration again and keeps the data', async () => {
    const url = `sqlite:${path.join(tempDir(), 'pets.db')}`;
    const storage = await openStorage(url);
    await storage.pets.create({ name: 'Rex', categoryId: 1, status: 'sold' });
    await storage.close();
    const reopened = await openStorage(url);
    expect(await reopened.pets.list({ limit: 10 })).toEqual([{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }]);
    await reopened.close();
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
