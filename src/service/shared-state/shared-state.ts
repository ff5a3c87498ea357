import type { BanList } from '../rate-limit/ban-list';
import type { RateLimitStores } from '../rate-limit/rate-limits';
import type { KeyChanges } from '../keys/key-changes';

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
