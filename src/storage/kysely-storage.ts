import type { Kysely, Selectable } from 'kysely';
import type { ApiKeyRecord, ApiKeyRepository, Pet, PetRepository, Storage } from './storage';
import type { ApiKeysTable, Database, PetsTable } from './schema';
import { sql } from 'kysely';

/**
 * The repositories on any Kysely dialect: the SQL is the same on SQLite and
 * PostgreSQL; what differs (driver, pragmas, type parsing, id column) lives in
 * the backend that builds the Kysely instance.
 */
export class KyselyStorage implements Storage {
  readonly pets: PetRepository;
  readonly apiKeys: ApiKeyRepository;

  constructor(
    readonly backend: string,
    private readonly db: Kysely<Database>,
    private readonly now: () => Date = () => new Date(),
    /** The connection pool's counts, where the backend has a pool. */
    readonly poolStats?: Storage['poolStats'],
  ) {
    this.pets = new KyselyPetRepository(db, now);
    this.apiKeys = new KyselyApiKeyRepository(db, now);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

const toPet = (row: Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status'>): Pet => ({
  id: row.id,
  name: row.name,
  categoryId: row.category_id,
  status: row.status,
});

class KyselyPetRepository implements PetRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async list({ limit, status }: { limit: number; status?: Pet['status'] }): Promise<Pet[]> {
    let query = this.db.selectFrom('pets').select(['id', 'name', 'category_id', 'status']);
    if (status !== undefined) query = query.where('status', '=', status);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map(toPet);
  }

  async create(pet: Omit<Pet, 'id'>): Promise<Pet> {
    const row = await this.db
      .insertInto('pets')
      .values({ name: pet.name, category_id: pet.categoryId, status: pet.status, created_at: this.now().toISOString() })
      .returning(['id', 'name', 'category_id', 'status'])
      .executeTakeFirstOrThrow();
    return toPet(row);
  }

  async get(id: number): Promise<Pet | undefined> {
    const row = await this.db
      .selectFrom('pets')
      .select(['id', 'name', 'category_id', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toPet(row);
  }
}

const toApiKey = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: row.id,
  prefix: row.prefix,
  plan: row.plan,
  label: row.label,
  requestsPerMinute: row.requests_per_minute,
  requestsPerDay: row.requests_per_day,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  bannedUntil: row.banned_until,
});

class KyselyApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async create(key: Parameters<ApiKeyRepository['create']>[0]): Promise<ApiKeyRecord> {
    const row = await this.db
      .insertInto('api_keys')
      .values({
        key_hash: key.hash,
        prefix: key.prefix,
        plan: key.plan,
        label: key.label,
        requests_per_minute: key.requestsPerMinute,
        requests_per_day: key.requestsPerDay,
        created_at: this.now().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toApiKey(row);
  }

  async findByHash(hash: string): Promise<(ApiKeyRecord & { hash: string }) | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return row && { ...toApiKey(row), hash: row.key_hash };
  }

  async get(id: number): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toApiKey(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().orderBy('id').execute();
    return rows.map(toApiKey);
  }

  async revoke(id: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: this.now().toISOString() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) return true;
    return (await this.db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  async setPlan(id: number, plan: Pick<ApiKeyRecord, 'plan' | 'requestsPerMinute' | 'requestsPerDay'>): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ plan: plan.plan, requests_per_minute: plan.requestsPerMinute, requests_per_day: plan.requestsPerDay })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async rotate(id: number, secret: { hash: string; prefix: string }): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ key_hash: secret.hash, prefix: secret.prefix })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async setBannedUntil(id: number, until: Date | null): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ banned_until: until?.toISOString() ?? null })
      .where('id', '=', id)
      .execute();
  }

  async count(): Promise<number> {
    const { count } = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(count);
  }
}
