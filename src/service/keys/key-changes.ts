/**
 * "Key N changed" (revoked, plan changed), so every instance drops its cached
 * copy at once instead of waiting for the cache to expire.
 */
export interface KeyChanges {
  subscribe(listener: (keyId: number) => void): void;
  publish(keyId: number): Promise<void>;
}
