/**
 * Schema migrations, run on every start by Kysely's Migrator (which records
 * what ran and, on PostgreSQL, holds an advisory lock so concurrent starts are
 * safe). Append new migrations; never edit one that has shipped.
 */
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { sql } from 'kysely';
import { Migrator } from 'kysely';
import type { Backend } from './backend';

/** The few column types that differ between backends come from the backend. */
type SqlFlavor = Pick<Backend, 'addIdColumn'>;

function migrations(flavor: SqlFlavor): Record<string, Migration> {
  return {
    '0001_pets_and_api_keys': {
      async up(db: Kysely<any>) {
        await flavor
          .addIdColumn(db.schema.createTable('pets'))
          .addColumn('name', 'text', (col) => col.notNull())
          .addColumn('category_id', 'bigint', (col) => col.notNull())
          .addColumn('status', 'text', (col) =>
            col.notNull().defaultTo('available').check(sql`status in ('available', 'pending', 'sold')`),
          )
          .addColumn('created_at', 'text', (col) => col.notNull())
          .execute();
        // Serves `WHERE status = ? ORDER BY id LIMIT ?` without a sort; the
        // unfiltered listing walks the primary key.
        await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute();

        await flavor
          .addIdColumn(db.schema.createTable('api_keys'))
          .addColumn('key_hash', 'text', (col) => col.notNull().unique())
          .addColumn('prefix', 'text', (col) => col.notNull())
          .addColumn('plan', 'text', (col) => col.notNull())
          .addColumn('label', 'text', (col) => col.notNull())
          .addColumn('requests_per_minute', 'integer')
          .addColumn('requests_per_day', 'integer')
          .addColumn('created_at', 'text', (col) => col.notNull())
          .addColumn('revoked_at', 'text')
          .execute();
      },
    },
    '0002_api_key_bans': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('api_keys').addColumn('banned_until', 'text').execute();
      },
    },
  };
}

/**
 * Brings the schema up to date; throws (and the server refuses to start) when
 * a migration fails.
 *
 * @example await migrateToLatest(backend);
 */
export async function migrateToLatest(backend: Backend): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(backend) };
  const schema = backend.migrationSchema;
  const migrator = new Migrator({ db: backend.db, provider, ...(schema && { migrationTableSchema: schema }) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error });
  }
}
