/**
 * Idempotency-Key: a create runs once per key, and expired records are
 * deleted. Code outside this folder imports it from here
 * (test/layout.test.ts checks it).
 *
 * @example const idempotency = idempotentRequests(storage.idempotencyKeys, { retentionMs, lockMs, now: Date.now });
 */
export { idempotentRequests, type IdempotentRequests } from './idempotent-requests';
export { purgeExpiredKeys } from './purge-expired';
