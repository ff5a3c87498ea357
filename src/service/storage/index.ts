/**
 * The store's data: the repositories behind one backend interface (SQLite,
 * PostgreSQL), migrations, and their timing. Code outside this folder
 * imports it from here (test/layout.test.ts checks it).
 *
 * @example const storage = await openStorage('sqlite:data/pets.db'); await storage.pets.get(1);
 */
export { KyselyStorage } from './kysely-storage';
export { migrateToLatest } from './migrations';
export { openStorage } from './open-storage';
export type { Database } from './schema';
export { sqliteBackend } from './sqlite-backend';
export { repositoriesOf, ROLES } from './storage';
export type {
  ApiKeyRecord,
  ApiKeyRepository,
  IdempotencyRepository,
  OrderRecord,
  OrderRepository,
  OrderStatus,
  Pet,
  PetRepository,
  PetStatus,
  PoolStats,
  Repositories,
  Role,
  Storage,
} from './storage';
export { timedStorage } from './timed-storage';
