/**
 * The storage boundary. Handlers and use cases see only these interfaces; a
 * backend (SQLite, PostgreSQL, ...) is chosen by configuration in
 * `open-storage.ts` and is invisible above this line.
 */
import type { Plan } from '../plans';

/** A connection pool's counts (PostgreSQL's), reported as gauges. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Where a pet is in its adoption (the `status` column). */
export type PetStatus = 'available' | 'pending' | 'sold';

/** Who set a pet's status last: one of its orders, or its creation or staff directly. */
export type StatusSource = 'order' | 'direct';

/** Where an order is: it leaves `placed` once, to `completed` or `cancelled`. */
export type OrderStatus = 'placed' | 'completed' | 'cancelled';

/** What a key may do beyond its own orders: `staff` see and change every order and change pets. */
export const ROLES = ['customer', 'staff'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A stored pet, as the repositories give it: the service's record, not a
 * version's wire type. The handlers return it as each version's `Pet`, so
 * the type checker says when a version's schema and the record part ways.
 */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

/** What listing pets takes: how many, optionally one status, and where the page starts. */
export interface ListPetsQuery {
  limit: number;
  status?: PetStatus | undefined;
  /** Only pets with a larger id (keyset paging); 0 by default. */
  after?: number;
}

/** A pet with its version (its ETag): what a conditional read or write needs. */
export interface VersionedPet {
  pet: Pet;
  version: number;
}

/** The fields staff may change on a pet. */
export type PetChanges = Partial<Omit<Pet, 'id'>>;

/** How a conditional change of a pet ended: changed, or why not (the version moved on, or its orders forbid the status). */
export type PetUpdate = { outcome: 'updated'; pet: VersionedPet } | { outcome: 'missing' | 'stale' | 'has_orders' };

export interface PetRepository {
  /** Pets in ascending id order, after `after`, at most `limit`, optionally only those with `status`. */
  list(query: ListPetsQuery): Promise<Pet[]>;
  /**
   * Stores a pet durably and returns it with its new id. With `request` (an
   * idempotency claim), at most one pet is ever stored for that claim: a
   * second create under it fails with a unique violation.
   */
  create(pet: Omit<Pet, 'id'>, options?: { request?: number }): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  /** The pet created under an idempotency claim, if one was. */
  createdBy(request: number): Promise<Pet | undefined>;
  /** The pet and its version. */
  getVersioned(id: number): Promise<VersionedPet | undefined>;
  /**
   * Changes a pet if its version is still `version`, in one statement; a
   * change of its status also needs it to have no placed or completed order.
   * The status it sets is `direct` (staff's).
   */
  update(id: number, changes: PetChanges, version: number): Promise<PetUpdate>;
}

/** A stored order, with what the API does not show: whose it is and its version. */
export interface OrderRecord {
  id: number;
  petId: number;
  status: OrderStatus;
  createdAt: string;
  updatedAt: string;
  /** The principal of the customer who placed it. */
  owner: string;
  version: number;
}

/** What listing orders takes: whose (all when undefined), optionally one status, keyset paging. */
export interface ListOrdersQuery {
  owner: string | undefined;
  status?: OrderStatus | undefined;
  limit: number;
  after?: number;
}

/** How placing an order ended: placed, or why not. */
export type Placement = { outcome: 'placed'; order: OrderRecord } | { outcome: 'no_pet' } | { outcome: 'not_available'; status: PetStatus };

export interface OrderRepository {
  /**
   * Places an order for an available pet and makes the pet `pending`, in one
   * transaction: of concurrent placements for one pet, exactly one succeeds.
   * With `request` (an idempotency claim), at most one order is ever placed for it.
   */
  place(petId: number, owner: string, options?: { request?: number }): Promise<Placement>;
  get(id: number): Promise<OrderRecord | undefined>;
  /** The order placed under an idempotency claim, if one was. */
  createdBy(request: number): Promise<OrderRecord | undefined>;
  /** Orders in ascending id order, after `after`, at most `limit`. */
  list(query: ListOrdersQuery): Promise<OrderRecord[]>;
  /**
   * Moves a `placed` order whose version is still `version` to `to`, and its
   * pet to `available` (cancelled) or `sold` (completed), in one
   * transaction; undefined when the order has moved on since.
   */
  close(id: number, to: Exclude<OrderStatus, 'placed'>, version: number): Promise<OrderRecord | undefined>;
}

/** A stored `Idempotency-Key` of an API key: the claim of the first request, then its response. */
export interface IdempotencyRecord {
  id: number;
  requestHash: string;
  /** Until when the request that holds the claim is deemed to be processing it. */
  lockedUntil: Date;
  expiresAt: Date;
  /** Set once the first request completed. */
  response: { status: number; body: unknown } | undefined;
}

export interface IdempotencyRepository {
  /** Records a new claim; undefined when the API key already has this key. */
  insert(claim: { owner: string; key: string; requestHash: string; lockedUntil: Date; expiresAt: Date }): Promise<number | undefined>;
  find(owner: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Takes over a claim whose holder ran out of time, if nobody took it first (it still has `lockedUntil`). */
  relock(id: number, lockedUntil: Date, newLockedUntil: Date): Promise<boolean>;
  /** Stores the response of the request that holds the claim. */
  complete(id: number, response: { status: number; body: unknown }): Promise<void>;
  /** Gives a claim up (its request failed), so a retry may take it at once. */
  unlock(id: number): Promise<void>;
  /** Deletes one record, if it has expired. */
  deleteExpired(id: number, now: Date): Promise<void>;
  /** Deletes every record expired before `now`; how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** Secrets every instance on the same database shares, created by the migrations. */
export interface SecretRepository {
  get(name: string): Promise<string | undefined>;
}

export interface ApiKeyRecord {
  id: number;
  /** The key's first characters, safe to show (`pas_AbC1…`). */
  prefix: string;
  plan: Plan;
  role: Role;
  label: string;
  /** Only for `enterprise`: its custom limits. */
  requestsPerMinute: number | null;
  requestsPerDay: number | null;
  createdAt: string;
  revokedAt: string | null;
  /** Set while the key is temporarily banned for hammering past its rate limit. */
  bannedUntil: string | null;
}

export interface NewApiKeyRecord {
  hash: string;
  prefix: string;
  plan: Plan;
  role: Role;
  label: string;
  requestsPerMinute: number | null;
  requestsPerDay: number | null;
}

export interface ApiKeyRepository {
  create(key: NewApiKeyRecord): Promise<ApiKeyRecord>;
  /** The key stored under this SHA-256 hash (revoked or not). */
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** The key with this id (revoked or not). */
  get(id: number): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; false when no such key exists. */
  revoke(id: number): Promise<boolean>;
  /** Changes a key's plan (and enterprise limits); false when no such key exists. */
  setPlan(id: number, plan: Pick<ApiKeyRecord, 'plan' | 'requestsPerMinute' | 'requestsPerDay'>): Promise<boolean>;
  /**
   * Replaces the secret of a key that is not revoked (its hash and display
   * prefix); id, plan, limits, label and ban stay. False when no such
   * unrevoked key exists.
   */
  rotate(id: number, secret: Pick<NewApiKeyRecord, 'hash' | 'prefix'>): Promise<boolean>;
  /** Records a temporary ban (or lifts it with null). */
  setBannedUntil(id: number, until: Date | null): Promise<void>;
  count(): Promise<number>;
}

/**
 * The repositories of the service's data, as handlers see them (their
 * context is derived from this): a new repository added here and in
 * kysely-storage.ts reaches every handler, with nothing to change in the
 * pipeline.
 */
export interface Repositories {
  readonly pets: PetRepository;
  readonly orders: OrderRepository;
}

/** The names of `Repositories`, to hand handlers exactly those. */
export const REPOSITORY_NAMES = ['pets', 'orders'] as const satisfies ReadonlyArray<keyof Repositories>;

/**
 * The repositories of a storage, as handlers receive them.
 *
 * @example handler(request, { ...repositoriesOf(storage), caller })
 */
export const repositoriesOf = (storage: Repositories): Repositories =>
  Object.fromEntries(REPOSITORY_NAMES.map((name) => [name, storage[name]])) as unknown as Repositories;

/** Every repository of a storage, by name (the handlers' ones and the service's own). */
export const STORAGE_REPOSITORY_NAMES = [...REPOSITORY_NAMES, 'apiKeys', 'idempotencyKeys', 'secrets'] as const;

/** An open database: repositories plus lifecycle. */
export interface Storage extends Repositories {
  /** `sqlite` or `postgres` (metrics, logs). */
  readonly backend: string;
  readonly apiKeys: ApiKeyRepository;
  readonly idempotencyKeys: IdempotencyRepository;
  readonly secrets: SecretRepository;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** What breaks the adoption invariant over the whole database (adoption-invariant.ts); empty when it holds. */
  adoptionViolations(): Promise<string[]>;
  /** The connection pool's counts, where there is a pool (PostgreSQL). */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}
