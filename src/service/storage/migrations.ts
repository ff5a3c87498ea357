/**
 * Schema migrations, run on every start by Kysely's Migrator (which records
 * what ran and, on PostgreSQL, holds an advisory lock so concurrent starts are
 * safe). Append new migrations; never change what one that has shipped does
 * to a database (0004 was rewritten through the backend seam with the same
 * result on PostgreSQL; 0005 completes it on SQLite databases it had run on).
 */
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { sql } from 'kysely';
import { Migrator } from 'kysely';
import type { Backend } from './backend';
import { randomBytes } from 'node:crypto';

/** The few column types and changes that differ between backends come from the backend. */
type ColumnTypes = Pick<Backend, 'addIdColumn' | 'retypeColumn'>;

function migrations(backend: ColumnTypes): Record<string, Migration> {
  return {
    '0001_pets_and_api_keys': {
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        await backend
          .addIdColumn(db.schema.createTable('pets'))
          .addColumn('name', 'text', (col) => col.notNull())
          .addColumn('category_id', 'bigint', (col) => col.notNull())
          .addColumn('status', 'text', (col) => col.notNull().defaultTo('available').check(sql`status in ('available', 'pending', 'sold')`))
          .addColumn('created_at', 'text', (col) => col.notNull())
          .execute();
        // Serves `WHERE status = ? ORDER BY id LIMIT ?` without a sort; the
        // unfiltered listing walks the primary key.
        await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute();

        await backend
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
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        await db.schema.alterTable('api_keys').addColumn('banned_until', 'text').execute();
      },
    },
    '0003_idempotency_and_secrets': {
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        // One row per (API key, Idempotency-Key): the claim, then the stored response.
        await backend
          .addIdColumn(db.schema.createTable('idempotency_keys'))
          .addColumn('owner', 'bigint', (col) => col.notNull())
          .addColumn('key', 'text', (col) => col.notNull())
          .addColumn('request_hash', 'text', (col) => col.notNull())
          .addColumn('locked_until', 'text', (col) => col.notNull())
          .addColumn('expires_at', 'text', (col) => col.notNull())
          .addColumn('response_status', 'integer')
          .addColumn('response_body', 'text')
          .addColumn('created_at', 'text', (col) => col.notNull())
          .addUniqueConstraint('idempotency_keys_owner_key', ['owner', 'key'])
          .execute();
        await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
        // The claim a pet was created under: at most one pet per claim, whatever crashes or races.
        await db.schema.alterTable('pets').addColumn('created_by_request', 'bigint').execute();
        // Partial: creates without a key (most) add nothing to it.
        await db.schema
          .createIndex('pets_created_by_request')
          .on('pets')
          .column('created_by_request')
          .unique()
          .where(sql.ref('created_by_request'), 'is not', null)
          .execute();
        // Secrets the instances of one database share (the signing key of page cursors).
        await db.schema
          .createTable('secrets')
          .addColumn('name', 'text', (col) => col.primaryKey())
          .addColumn('value', 'text', (col) => col.notNull())
          .execute();
        await db
          .insertInto('secrets')
          .values({ name: 'page-cursors', value: randomBytes(32).toString('base64url') })
          .execute();
      },
    },
    '0004_idempotency_owner_principal': {
      // Idempotency-Keys are scoped to the caller's principal (`key:12`, `token:<sub>`), not to an API key's id:
      // callers that present an access token have none.
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        await backend.retypeColumn(db, { table: 'idempotency_keys', column: 'owner', type: 'text', using: `'key:' || owner` });
      },
    },
    '0005_idempotency_owner_declared_text': {
      // An SQLite database migrated by the first 0004 kept its text owners in a column declared bigint: declared text now.
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        await backend.retypeColumn(db, { table: 'idempotency_keys', column: 'owner', type: 'text' });
      },
    },
    '0006_adoption': {
      // Orders, the versions behind ETags, and roles. Two partial unique indexes make the adoption rules the database's:
      // a pet has at most one placed and at most one completed order, whatever races or crashes.
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's guide types migrations Kysely<any>: a migration must not depend on today's table types.
      async up(db: Kysely<any>) {
        await db.schema
          .alterTable('api_keys')
          .addColumn('role', 'text', (col) => col.notNull().defaultTo('customer').check(sql`role in ('customer', 'staff')`))
          .execute();
        await db.schema
          .alterTable('pets')
          .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
          .execute();
        await db.schema
          .alterTable('pets')
          .addColumn('status_source', 'text', (col) => col.notNull().defaultTo('direct').check(sql`status_source in ('direct', 'order')`))
          .execute();
        await backend
          .addIdColumn(db.schema.createTable('orders'))
          .addColumn('pet_id', 'bigint', (col) => col.notNull().references('pets.id'))
          .addColumn('owner', 'text', (col) => col.notNull())
          .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('placed', 'completed', 'cancelled')`))
          .addColumn('created_at', 'text', (col) => col.notNull())
          .addColumn('updated_at', 'text', (col) => col.notNull())
          .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
          .addColumn('created_by_request', 'bigint')
          .execute();
        await db.schema.createIndex('orders_one_placed').on('orders').column('pet_id').unique().where(sql.ref('status'), '=', 'placed').execute();
        await db.schema.createIndex('orders_one_completed').on('orders').column('pet_id').unique().where(sql.ref('status'), '=', 'completed').execute();
        // A customer's listing walks (owner, id); staff's the primary key or (status, id).
        await db.schema.createIndex('orders_owner_id').on('orders').columns(['owner', 'id']).execute();
        await db.schema.createIndex('orders_status_id').on('orders').columns(['status', 'id']).execute();
        await db.schema.createIndex('orders_pet_id').on('orders').column('pet_id').execute();
        await db.schema
          .createIndex('orders_created_by_request')
          .on('orders')
          .column('created_by_request')
          .unique()
          .where(sql.ref('created_by_request'), 'is not', null)
          .execute();
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
