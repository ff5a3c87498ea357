/** Table shapes as Kysely sees them (column names are snake_case in SQL). */
import type { Generated } from 'kysely';
import type { PetStatus } from './storage';
import type { Plan } from '../rate-limit/plans';

export interface PetsTable {
  id: Generated<number>;
  name: string;
  category_id: number;
  status: PetStatus;
  created_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  key_hash: string;
  prefix: string;
  plan: Plan;
  label: string;
  requests_per_minute: number | null;
  requests_per_day: number | null;
  created_at: string;
  revoked_at: string | null;
  banned_until: string | null;
}

export interface Database {
  pets: PetsTable;
  api_keys: ApiKeysTable;
}
