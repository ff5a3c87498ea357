/**
 * What instances share: rate-limit counters, bans and the key-change signal,
 * in Redis (REDIS_URL, loaded only then) or the cluster primary (WORKERS).
 * Code outside this folder imports it from here (test/layout.test.ts checks it).
 *
 * @example const shared = await openSharedState(config, storage.apiKeys, logger, (kind) => metrics.redisErrors.inc({ kind }));
 */
export { servePrimarySharedState } from './cluster-state';
export { openSharedState } from './open-shared-state';
export { keyChangesChannel, type SharedState } from './shared-state';
