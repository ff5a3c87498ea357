import type { BanList } from '../rate-limit';
import type { RateLimitStores } from '../rate-limit';
import type { KeyChanges } from '../keys';

/**
 * What the processes serving one API share: rate-limit counters, bans, and
 * the "this key changed" signal (revocation, plan change). Redis between
 * instances (redis-state.ts), the cluster primary between the workers of one
 * instance (cluster-state.ts); absent for a single process, which keeps them
 * in memory.
 */
export interface SharedState {
  /** What shares them, for the start line and the logs. */
  readonly kind: 'redis' | 'cluster';
  readonly stores: RateLimitStores;
  readonly banList: BanList;
  readonly keyChanges: KeyChanges;
  /** Resolves when the shared state answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The Redis channel of key changes (revocations, plan changes) under a key prefix: the keys CLI publishes, every instance listens. */
export const keyChangesChannel = (prefix: string): string => `${prefix}key-changes`;
