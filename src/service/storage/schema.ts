/** Table shapes as Kysely sees them (column names are snake_case in SQL). */
import type { Generated } from 'kysely';
import type { OrderStatus, PetStatus, Role, StatusSource } from './storage';
import type { Plan } from '../plans';

export interface PetsTable {
  id: Generated<number>;
  name: string;
  category_id: number;
  status: PetStatus;
  created_at: string;
  /** The idempotency claim (idempotency_keys.id) the pet was created under, if any. */
  created_by_request: number | null;
  /** Bumped by every change: the pet's ETag. */
  version: Generated<number>;
  /** Who set `status` last: an order (`order`), or its creation or staff (`direct`); read by the adoption invariant. */
  status_source: Generated<StatusSource>;
}

export interface OrdersTable {
  id: Generated<number>;
  pet_id: number;
  /** The principal (`key:12`, `token:<sub>`) of the customer who placed it. */
  owner: string;
  status: OrderStatus;
  created_at: string;
  updated_at: string;
  /** Bumped by every change: the order's ETag. */
  version: Generated<number>;
  /** The idempotency claim the order was placed under, if any. */
  created_by_request: number | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  key_hash: string;
  prefix: string;
  plan: Plan;
  role: Generated<Role>;
  label: string;
  requests_per_minute: number | null;
  requests_per_day: number | null;
  created_at: string;
  revoked_at: string | null;
  banned_until: string | null;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  /** The caller's principal (`key:12`, `token:<sub>`). */
  owner: string;
  key: string;
  request_hash: string;
  /** ISO time until which the claim is held by the request processing it. */
  locked_until: string;
  expires_at: string;
  response_status: number | null;
  /** The response body as JSON text. */
  response_body: string | null;
  created_at: string;
}

export interface SecretsTable {
  name: string;
  value: string;
}

export interface Database {
  pets: PetsTable;
  orders: OrdersTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  secrets: SecretsTable;
}
