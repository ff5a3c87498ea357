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
