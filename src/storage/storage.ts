/**
 * The storage boundary. Handlers and use cases see only these interfaces; a
 * backend (SQLite, PostgreSQL, ...) is chosen by configuration in
 * `open-storage.ts` and is invisible above this line.
 */
import type { components } from '../../generated/openapi';

export type Pet = components['schemas']['Pet'];
export type PetStatus = components['schemas']['PetStatus'];
export type NewPetRecord = Omit<Pet, 'id'>;

export interface ListPetsQuery {
  limit: number;
  status?: PetStatus;
}

export interface PetRepository {
  /** Pets in ascending id order, at most `limit`, optionally only those with `status`. */
  list(query: ListPetsQuery): Promise<Pet[]>;
  /** Stores a pet durably and returns it with its new id. */
  create(pet: NewPetRecord): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
}

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

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
  /** The key stored under this SHA-256 hash (revoked or not), with the stored hash. */
  findByHash(hash: string): Promise<(ApiKeyRecord & { hash: string }) | undefined>;
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

/** An open database: repositories plus lifecycle. */
export interface Storage {
  readonly backend: string;
  readonly pets: PetRepository;
  readonly apiKeys: ApiKeyRepository;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** The connection pool's counts, where there is a pool (PostgreSQL). */
  poolStats?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}
