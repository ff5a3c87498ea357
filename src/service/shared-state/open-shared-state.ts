import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { ApiKeyRepository } from '../storage';
import { clusterWorkerState } from './cluster-state';
import type * as RedisState from './redis-state';
import type { SharedState } from './shared-state';

export interface SharedStateSettings {
  /** `REDIS_URL`: counts, bans and key changes shared by every instance. */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
}

/**
 * Redis-backed shared state when REDIS_URL is set (loaded only then, so one
 * instance never pays for ioredis); else, in a worker of `WORKERS=N`, the
 * cluster primary's; else none (this process counts in memory).
 *
 * @example const shared = await openSharedState(config, storage.apiKeys, logger, (kind) => metrics.redisErrors.inc({ kind }));
 */
export async function openSharedState(
  settings: SharedStateSettings,
  apiKeys: ApiKeyRepository,
  logger: Logger,
  onRedisError: (kind: string) => void,
): Promise<SharedState | undefined> {
  if (!settings.redisUrl) return cluster.isWorker ? clusterWorkerState(apiKeys) : undefined;
  const { openRedisState } = require('./redis-state') as typeof RedisState;
  return openRedisState(settings.redisUrl, apiKeys, logger, settings.redisKeyPrefix, onRedisError);
}
