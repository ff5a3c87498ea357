import type { Compilable, CompiledQuery, Kysely, Selectable } from 'kysely';
import type {
  ApiKeyRecord,
  ApiKeyRepository,
  IdempotencyRecord,
  IdempotencyRepository,
  ListOrdersQuery,
  ListPetsQuery,
  OrderRecord,
  OrderRepository,
  OrderStatus,
  Pet,
  PetChanges,
  PetRepository,
  PetUpdate,
  Placement,
  StatusSource,
  VersionedPet,
  SecretRepository,
  Storage,
} from './storage';
import type { ApiKeysTable, Database } from './schema';
import type { Backend, PreparedRunner } from './backend';
import { sql } from 'kysely';
import { adoptionViolations } from './adoption-invariant';

/**
 * The repositories on any Kysely dialect: the SQL is the same on SQLite and
 * PostgreSQL; what differs (driver, pragmas, type parsing, id column) lives in
 * the backend that builds the Kysely instance.
 */
export class KyselyStorage implements Storage {
  readonly backend: string;
  readonly pets: PetRepository;
  readonly orders: OrderRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly idempotencyKeys: IdempotencyRepository;
  readonly secrets: SecretRepository;
  readonly poolStats?: Storage['poolStats'];
  private readonly db: Kysely<Database>;

  /** @example const storage = new KyselyStorage(await sqliteBackend.open('sqlite::memory:')); */
  constructor(backend: Backend, now: () => Date = () => new Date()) {
    this.backend = backend.name;
    this.db = backend.db;
    if (backend.poolStats) this.poolStats = backend.poolStats;
    this.pets = new KyselyPetRepository(backend.db, now, backend.runPrepared);
    this.orders = new KyselyOrderRepository(backend.db, now);
    this.apiKeys = new KyselyApiKeyRepository(backend.db, now);
    this.idempotencyKeys = new KyselyIdempotencyRepository(backend.db, now);
    this.secrets = new KyselySecretRepository(backend.db);
  }

  adoptionViolations(): Promise<string[]> {
    return adoptionViolations(this.db);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/**
 * A query built and compiled once, at start, and run with new parameter
 * values: the SQL text never changes, so building the query tree and
 * compiling it per request would be pure overhead (and the driver reuses its
 * prepared statement for the same text). `sample` gives the values the query
 * was built with, to check the parameters are exactly the ones supplied later.
 *
 * @example const byId = prepare(db.selectFrom('pets').selectAll().where('id', '=', 0), [0]); await db.executeQuery(byId(12));
 */
function prepare<R>(query: Compilable<R>, sample: readonly unknown[]): (...values: unknown[]) => CompiledQuery<R> {
  const compiled = query.compile();
  if (compiled.parameters.length !== sample.length || compiled.parameters.some((value, index) => value !== sample[index])) {
    throw new Error(`prepared query: parameters ${JSON.stringify(compiled.parameters)} are not ${JSON.stringify(sample)} (${compiled.sql})`);
  }
  return (...values) => ({ ...compiled, parameters: values });
}

/**
 * A page's LIMIT as a parameter the query planner cannot see. SQLite plans a
 * bare `LIMIT ?` with the value bound and re-plans the statement whenever a
 * different value is bound; better-sqlite3 clears the bindings after each
 * run, so every run of a bare `LIMIT ?` was parsed and planned again. The
 * cast is the same number on SQLite and PostgreSQL.
 */
const pageLimit = (limit: number) => sql<number>`cast(${limit} as integer)`;

/** Selected under the API's names, so a row is a Pet as it comes. */
const PET_COLUMNS = ['id', 'name', 'category_id as categoryId', 'status'] as const;

class KyselyPetRepository implements PetRepository {
  private readonly queries;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly run: PreparedRunner,
  ) {
    const pets = db.selectFrom('pets').select(PET_COLUMNS);
    this.queries = {
      // Keyset paging: `id > after` walks the primary key (or the (status, id) index) from where the last page ended.
      list: prepare(pets.where('id', '>', 0).orderBy('id').limit(pageLimit(1)), [0, 1]),
      listByStatus: prepare(pets.where('status', '=', 'available').where('id', '>', 0).orderBy('id').limit(pageLimit(1)), ['available', 0, 1]),
      get: prepare(pets.where('id', '=', 0), [0]),
      getVersioned: prepare(
        db
          .selectFrom('pets')
          .select([...PET_COLUMNS, 'version'])
          .where('id', '=', 0),
        [0],
      ),
      // `is not null` lets PostgreSQL use the partial unique index on the column.
      createdBy: prepare(pets.where('created_by_request', '=', -1).where('created_by_request', 'is not', null), [-1]),
      create: prepare(
        db.insertInto('pets').values({ name: '', category_id: 0, status: 'available', created_at: '', created_by_request: -1 }).returning(PET_COLUMNS),
        ['', 0, 'available', '', -1],
      ),
    };
  }

  async list({ limit, status, after = 0 }: ListPetsQuery): Promise<Pet[]> {
    const query = status === undefined ? this.queries.list(after, limit) : this.queries.listByStatus(status, after, limit);
    return this.run(query);
  }

  async create(pet: Parameters<PetRepository['create']>[0], options: { request?: number } = {}): Promise<Pet> {
    const rows = await this.run(this.queries.create(pet.name, pet.categoryId, pet.status, this.now().toISOString(), options.request ?? null));
    if (rows.length !== 1) throw new Error(`insert into pets returned ${rows.length} rows`);
    return rows[0]!;
  }

  async get(id: number): Promise<Pet | undefined> {
    return (await this.run(this.queries.get(id)))[0];
  }

  async createdBy(request: number): Promise<Pet | undefined> {
    return (await this.run(this.queries.createdBy(request)))[0];
  }

  async getVersioned(id: number): Promise<VersionedPet | undefined> {
    const [row] = await this.run(this.queries.getVersioned(id));
    return row && versioned(row);
  }

  async update(id: number, changes: PetChanges, version: number): Promise<PetUpdate> {
    const { name, categoryId, status } = changes;
    const row = await this.db
      .updateTable('pets')
      .set({
        ...(name !== undefined && { name }),
        ...(categoryId !== undefined && { category_id: categoryId }),
        ...(status !== undefined && {
          status,
          // A status staff set is theirs; one they leave as it was keeps its source (an order's).
          status_source: sql<StatusSource>`case when status <> ${status} then 'direct' else status_source end`,
        }),
        version: sql<number>`version + 1`,
      })
      .where('id', '=', id)
      .where('version', '=', version)
      .$if(status !== undefined, (query) =>
        query.where((eb) =>
          eb.or([
            eb('status', '=', status!),
            eb.not(
              eb.exists(
                eb.selectFrom('orders').select('orders.id').whereRef('orders.pet_id', '=', 'pets.id').where('orders.status', 'in', ['placed', 'completed']),
              ),
            ),
          ]),
        ),
      )
      .returning([...PET_COLUMNS, 'version'])
      .executeTakeFirst();
    if (row) return { outcome: 'updated', pet: versioned(row) };
    const now = await this.getVersioned(id);
    return { outcome: now === undefined ? 'missing' : now.version !== version ? 'stale' : 'has_orders' };
  }
}

/** A pet row with its version column, as a pet and its version. */
const versioned = ({ version, ...pet }: Pet & { version: number }): VersionedPet => ({ pet, version });

/** Selected under the service's names, so a row is an OrderRecord as it comes. */
const ORDER_COLUMNS = ['id', 'pet_id as petId', 'status', 'created_at as createdAt', 'updated_at as updatedAt', 'owner', 'version'] as const;

class KyselyOrderRepository implements OrderRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async place(petId: number, owner: string, options: { request?: number } = {}): Promise<Placement> {
    return this.db.transaction().execute(async (trx): Promise<Placement> => {
      // The compare-and-set on the pet's status is what makes one placement of many win: the others find it pending.
      const taken = await trx
        .updateTable('pets')
        .set({ status: 'pending', status_source: 'order', version: sql<number>`version + 1` })
        .where('id', '=', petId)
        .where('status', '=', 'available')
        .returning('id')
        .executeTakeFirst();
      if (!taken) {
        const pet = await trx.selectFrom('pets').select('status').where('id', '=', petId).executeTakeFirst();
        return pet ? { outcome: 'not_available', status: pet.status } : { outcome: 'no_pet' };
      }
      const at = this.now().toISOString();
      const order = await trx
        .insertInto('orders')
        .values({ pet_id: petId, owner, status: 'placed', created_at: at, updated_at: at, created_by_request: options.request ?? null })
        .returning(ORDER_COLUMNS)
        .executeTakeFirstOrThrow();
      return { outcome: 'placed', order };
    });
  }

  async get(id: number): Promise<OrderRecord | undefined> {
    return this.db.selectFrom('orders').select(ORDER_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async createdBy(request: number): Promise<OrderRecord | undefined> {
    return this.db
      .selectFrom('orders')
      .select(ORDER_COLUMNS)
      .where('created_by_request', '=', request)
      .where('created_by_request', 'is not', null)
      .executeTakeFirst();
  }

  async list({ owner, status, limit, after = 0 }: ListOrdersQuery): Promise<OrderRecord[]> {
    return this.db
      .selectFrom('orders')
      .select(ORDER_COLUMNS)
      .$if(owner !== undefined, (query) => query.where('owner', '=', owner!))
      .$if(status !== undefined, (query) => query.where('status', '=', status!))
      .where('id', '>', after)
      .orderBy('id')
      .limit(pageLimit(limit))
      .execute();
  }

  async close(id: number, to: Exclude<OrderStatus, 'placed'>, version: number): Promise<OrderRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const order = await trx
        .updateTable('orders')
        .set({ status: to, updated_at: this.now().toISOString(), version: sql<number>`version + 1` })
        .where('id', '=', id)
        .where('version', '=', version)
        .where('status', '=', 'placed')
        .returning(ORDER_COLUMNS)
        .executeTakeFirst();
      if (!order) return undefined;
      await trx
        .updateTable('pets')
        .set({ status: to === 'completed' ? 'sold' : 'available', status_source: 'order', version: sql<number>`version + 1` })
        .where('id', '=', order.petId)
        .execute();
      return order;
    });
  }
}

class KyselyIdempotencyRepository implements IdempotencyRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
  ) {}

  async insert(claim: Parameters<IdempotencyRepository['insert']>[0]): Promise<number | undefined> {
    const row = await this.db
      .insertInto('idempotency_keys')
      .values({
        owner: claim.owner,
        key: claim.key,
        request_hash: claim.requestHash,
        locked_until: claim.lockedUntil.toISOString(),
        expires_at: claim.expiresAt.toISOString(),
        created_at: this.now().toISOString(),
      })
      .onConflict((conflict) => conflict.columns(['owner', 'key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row?.id;
  }

  async find(owner: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.db.selectFrom('idempotency_keys').selectAll().where('owner', '=', owner).where('key', '=', key).executeTakeFirst();
    return (
      row && {
        id: row.id,
        requestHash: row.request_hash,
        lockedUntil: new Date(row.locked_until),
        expiresAt: new Date(row.expires_at),
        response: row.response_status === null ? undefined : { status: row.response_status, body: JSON.parse(row.response_body ?? 'null') as unknown },
      }
    );
  }

  async relock(id: number, lockedUntil: Date, newLockedUntil: Date): Promise<boolean> {
    const result = await this.db
      .updateTable('idempotency_keys')
      .set({ locked_until: newLockedUntil.toISOString() })
      .where('id', '=', id)
      .where('locked_until', '=', lockedUntil.toISOString())
      .where('response_status', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async complete(id: number, response: { status: number; body: unknown }): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ response_status: response.status, response_body: JSON.stringify(response.body) })
      .where('id', '=', id)
      .execute();
  }

  async unlock(id: number): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ locked_until: new Date(0).toISOString() })
      .where('id', '=', id)
      .where('response_status', 'is', null)
      .execute();
  }

  async deleteExpired(id: number, now: Date): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('id', '=', id).where('expires_at', '<=', now.toISOString()).execute();
  }

  async purgeExpired(now: Date): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

class KyselySecretRepository implements SecretRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(name: string): Promise<string | undefined> {
    return (await this.db.selectFrom('secrets').select('value').where('name', '=', name).executeTakeFirst())?.value;
  }
}

const toApiKey = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: row.id,
  prefix: row.prefix,
  plan: row.plan,
  role: row.role,
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
        role: key.role,
        label: key.label,
        requests_per_minute: key.requestsPerMinute,
        requests_per_day: key.requestsPerDay,
        created_at: this.now().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toApiKey(row);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return row && toApiKey(row);
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
