import type { Express } from 'express';
import path from 'node:path';
import request from 'supertest';
import { createApp, type AppDependencies } from '../../src/compose';
import { openStorage } from '../../src/storage/open-storage';
import type { Plan, Storage } from '../../src/storage/storage';
import { issueApiKey } from '../../src/auth/key-service';
import { assertConformsToSpec } from './spec-conformance';
import { tempDir } from './paths';
import { memoryLog } from './memory-log';
import { createLogger } from '../../src/observability/logger';
import { openRedisState, type SharedState } from '../../src/shared-state/redis-state';
import { isolatedPostgresUrl, isolationName, REDIS_URL, TEST_BACKEND } from './backend';
import { createMetrics, type Metrics } from '../../src/observability/metrics';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * supertest against the app, with every response checked against the
 * contract before the test sees it.
 */
export type ApiClient = { [M in Method]: (url: string) => request.Test };

export function apiClient(app: Express): ApiClient {
  const agent = request(app);
  const wrap =
    (method: Method) =>
    (url: string): request.Test =>
      agent[method](url).expect((res) => assertConformsToSpec(res));
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
    head: wrap('head'),
    options: wrap('options'),
  };
}

export interface TestApp {
  app: Express;
  api: ApiClient;
  storage: Storage;
  /** A valid key of plan `free`, as `Bearer <key>`. */
  auth: string;
  databaseUrl: string;
  /** Everything the app logged, one JSON object per line. */
  logs: () => string;
  /** The app's Prometheus metrics (Redis errors included on the postgres+redis backend). */
  metrics: Metrics;
  issueKey(plan?: Plan, limits?: { requestsPerMinute?: number; requestsPerDay?: number }): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real app on a real database, fresh unless `databaseUrl` is given: an
 * SQLite file, or (in the postgres+redis project) a PostgreSQL schema of its
 * own with Redis-backed rate limits under a key prefix of its own.
 *
 * @example const t = await startTestApp(); await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
 */
export async function startTestApp(
  options: Partial<Omit<AppDependencies, 'storage' | 'logger'>> & { databaseUrl?: string } = {},
): Promise<TestApp> {
  const name = isolationName();
  const databaseUrl =
    options.databaseUrl ?? (TEST_BACKEND === 'postgres' ? isolatedPostgresUrl(name) : `sqlite:${path.join(tempDir(), 'pets.db')}`);
  const storage = await openStorage(databaseUrl);
  const log = memoryLog();
  const logger = createLogger('info', log.sink);
  const metrics = options.metrics ?? createMetrics();
  let shared: SharedState | undefined;
  if (TEST_BACKEND === 'postgres') {
    shared = await openRedisState(REDIS_URL!, storage.apiKeys, logger, `pas:${name}:`, (kind) => metrics.redisErrors.inc({ kind }));
  }
  const app = createApp({
    // The production path: responses are written directly, and every one the
    // tests receive is checked against the contract by the client below.
    validateResponses: false,
    logRequests: true,
    ...shared?.appDependencies,
    ...options,
    metrics,
    storage,
    logger,
  });
  const issueKey: TestApp['issueKey'] = async (plan = 'free', limits = {}) =>
    `Bearer ${(await issueApiKey(storage.apiKeys, { plan, ...limits })).key}`;
  return {
    app,
    api: apiClient(app),
    storage,
    auth: await issueKey(),
    databaseUrl,
    logs: log.text,
    metrics,
    issueKey,
    close: async () => {
      await shared?.close();
      await storage.close();
    },
  };
}
