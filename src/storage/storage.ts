/**
 * The storage boundary. Handlers and use cases see only these interfaces; a
 * backend (SQLite, PostgreSQL, ...) is chosen by configuration in
 * `open-storage.ts` and is invisible above this line.
 */
import type { components } from '../../generated/openapi';

import type { operations } from '../../generated/openapi';
import type { Plan } from '../rate-limit/plans';
import type { PoolStats } from './backend';

export type Pet = components['schemas']['Pet'];
export type PetStatus = components['schemas']['PetStatus'];

/** What listing pets takes: the listPets query parameters the storage understands, from the contract. */
export type ListPetsQuery = Pick<Required<NonNullable<operations['listPets']['parameters']['query']>>, 'limit'> &
  Pick<NonNullable<operations['listPets']['parameters']['query']>, 'status'>;

export interface PetRepository {
  /** Pets in ascending id order, at most `limit`, optionally only those with `status`. */
  list(query: ListPetsQuery): Promise<Pet[]>;
  /** Stores a pet durably and returns it with its new id. */
  create(pet: Omit<Pet, 'id'>): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
}

export interface ApiKeyRecord {
  id: number;
  /** The key's first characters, safe to show (`pas_AbC1…`). */
  prefix: string;
  plan: Plan;
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
}

/** The names of `Repositories`, to hand handlers exactly those. */
export const REPOSITORY_NAMES = ['pets'] as const satisfies ReadonlyArray<keyof Repositories>;

/**
 * The repositories of a storage, as handlers receive them.
 *
 * @example handler(request, { ...repositoriesOf(storage), caller })
 */
export const repositoriesOf = (storage: Repositories): Repositories =>
  Object.fromEntries(REPOSITORY_NAMES.map((name) => [name, storage[name]])) as unknown as Repositories;

/** An open database: repositories plus lifecycle. */
export interface Storage extends Repositories {
  /** `sqlite` or `postgres` (metrics, logs). */
  readonly backend: string;
  readonly apiKeys: ApiKeyRepository;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** The connection pool's counts, where there is a pool (PostgreSQL). */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}
