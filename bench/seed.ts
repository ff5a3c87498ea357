/**
 * Test data: the same pets for the project's database and the baselines' memory.
 */
import BetterSqlite3 from 'better-sqlite3';

export interface BenchPet {
  id: number;
  name: string;
  categoryId: number;
  status: 'available' | 'pending' | 'sold';
}

const NAMES = ['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Daisy', 'Milo', 'Coco', 'Rocky', 'Nala', 'Oscar', 'Willow'];
const STATUSES = ['available', 'available', 'pending', 'sold'] as const;

/** Pet number `id` (1-based), as the API returns it. Deterministic. */
export function petAt(id: number): BenchPet {
  return { id, name: `${NAMES[id % NAMES.length]} ${id}`, categoryId: 1 + (id % 7), status: STATUSES[id % STATUSES.length]! };
}

export const petsUpTo = (count: number): BenchPet[] => Array.from({ length: count }, (_, index) => petAt(index + 1));

/**
 * Inserts pets 1..count into the `pets` table of an already migrated SQLite
 * file (the keys CLI migrates it), in one transaction with one prepared
 * statement. Returns the time taken in ms.
 */
export function seedPets(file: string, count: number): number {
  const started = performance.now();
  const db = new BetterSqlite3(file);
  try {
    // Only this connection, only while seeding: the file is throwaway.
    db.pragma('synchronous = OFF');
    const insert = db.prepare('INSERT INTO pets (id, name, category_id, status, created_at) VALUES (?, ?, ?, ?, ?)');
    const createdAt = '2026-01-01T00:00:00.000Z';
    db.transaction(() => {
      for (let id = 1; id <= count; id++) {
        const pet = petAt(id);
        insert.run(pet.id, pet.name, pet.categoryId, pet.status, createdAt);
      }
    })();
    const stored = (db.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n;
    if (stored !== count) throw new Error(`seeding ${file}: expected ${count} pets, found ${stored}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return performance.now() - started;
}

/**
 * Inserts `count` pets numbered from `first`, every one `available`, for the
 * placeOrder scenario to order one each (the pets 1..N of `seedPets` are a
 * mix of statuses, and the other scenarios read them).
 */
export function seedOrderablePets(file: string, first: number, count: number): number {
  const started = performance.now();
  const db = new BetterSqlite3(file);
  try {
    db.pragma('synchronous = OFF');
    const insert = db.prepare("INSERT INTO pets (id, name, category_id, status, created_at) VALUES (?, ?, ?, 'available', ?)");
    const createdAt = '2026-01-01T00:00:00.000Z';
    db.transaction(() => {
      for (let id = first; id < first + count; id++) insert.run(id, petAt(id).name, petAt(id).categoryId, createdAt);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return performance.now() - started;
}

/**
 * Undoes the orders placed on pets first..first+count-1: every pet of the
 * range `available` again as seeded (status, status_source, version), their
 * orders deleted. The bench calls it between two loads of the placeOrder scenario,
 * while the servers that share the file are idle, so every load starts from
 * the same table and every request finds its pet available. A checkout whose
 * schema predates versions (`--before`) has no `orders` table: nothing to undo.
 */
export function resetOrders(file: string, first: number, count: number): void {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('busy_timeout = 5000');
    const hasOrders = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'orders'").get() !== undefined;
    if (!hasOrders) return;
    const last = first + count - 1;
    db.transaction(() => {
      db.prepare(
        "UPDATE pets SET status = 'available', status_source = 'direct', version = 1 WHERE id BETWEEN ? AND ? AND (status <> 'available' OR version <> 1)",
      ).run(first, last);
      db.prepare('DELETE FROM orders WHERE pet_id BETWEEN ? AND ?').run(first, last);
    })();
  } finally {
    db.close();
  }
}
