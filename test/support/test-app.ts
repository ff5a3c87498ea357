import type { Express } from 'express';
import path from 'node:path';
import request from 'supertest';
import { compose, type ComposeOverrides, type Service } from '../../src/compose';
import { loadConfig, withSettings, type Config } from '../../src/config';
import type { Role, Storage } from '../../src/service/storage';
import type { Plan } from '../../src/service/plans';
import { issueApiKey } from '../../src/service/keys';
import type { Metrics } from '../../src/observability';
import { assertResponseConforms, type ConformanceOptions } from './spec-conformance';
import { tempDir } from './paths';
import { memoryLog } from './memory-log';
import { isolatedPostgresUrl, isolationName, REDIS_URL, TEST_BACKEND } from './backend';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * supertest against the app, with every response checked against the
 * contract before the test sees it. A 5xx fails the check unless the test
 * says it expects that status (`.expect(503)`).
 */
export type ApiClient = { [M in Method]: (url: string) => request.Test };

export function apiClient(app: Express, contract?: ConformanceOptions['contract']): ApiClient {
  const agent = request(app);
  const wrap =
    (method: Method) =>
    (url: string): request.Test => {
      const test = agent[method](url);
      const expected = new Set<number>();
      const expect = test.expect.bind(test) as (...args: unknown[]) => request.Test;
      // Statuses the test pins: a 5xx among them is expected, not a failure.
      test.expect = ((...args: unknown[]) => {
        if (typeof args[0] === 'number') expected.add(args[0]);
        return expect(...args);
      }) as request.Test['expect'];
      return expect((res: request.Response) =>
        assertResponseConforms(
          {
            method: method.toUpperCase(),
            url: (res as unknown as { req: { path: string } }).req.path,
            status: res.status,
            headers: res.headers,
            body: res.body,
            text: res.text,
          },
          { expectedStatuses: expected, ...(contract && { contract }) },
        ),
      );
    };
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

/** What a test may change: settings of the configuration, and the composition root's overrides. */
export interface TestAppOptions extends Omit<ComposeOverrides, 'logDestination'> {
  /** A database to reuse (another test app's); a fresh one by default. */
  databaseUrl?: string;
  /** Rate-limit settings to change (windows, bans, the per-IP limit). */
  rateLimits?: Partial<Config['rateLimits']>;
  /** Any other setting of the configuration. */
  settings?: Partial<Omit<Config, 'rateLimits'>>;
}

export interface TestApp {
  app: Express;
  api: ApiClient;
  service: Service;
  storage: Storage;
  /** A valid key of plan `free`, as `Bearer <key>`. */
  auth: string;
  databaseUrl: string;
  /** Everything the app logged, one JSON object per line. */
  logs: () => string;
  /** The app's Prometheus metrics (Redis errors included on the postgres+redis backend). */
  metrics: Metrics;
  issueKey(plan?: Plan, limits?: { requestsPerMinute?: number; requestsPerDay?: number; role?: Role }): Promise<string>;
  close(): Promise<void>;
}

/**
 * The configuration of a test app: the server's, read from an environment
 * as `npm start` reads it, on this test's own database (an SQLite file, or in
 * the postgres+redis project a PostgreSQL schema and a Redis key prefix of
 * its own), with the changes the test asks for. Responses are written
 * directly, as in production, and every one the tests receive is checked
 * against the contract by the client.
 */
export function testConfig(options: Pick<TestAppOptions, 'databaseUrl' | 'rateLimits' | 'settings'> = {}): Config {
  const name = isolationName();
  const databaseUrl = options.databaseUrl ?? (TEST_BACKEND === 'postgres' ? isolatedPostgresUrl(name) : `sqlite:${path.join(tempDir(), 'pets.db')}`);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    VALIDATE_RESPONSES: 'false',
    ...(TEST_BACKEND === 'postgres' && { REDIS_URL: REDIS_URL!, REDIS_KEY_PREFIX: `pas:${name}:` }),
  });
  return withSettings(config, { ...options.settings, rateLimits: { ...config.rateLimits, ...options.rateLimits } });
}

/**
 * A real app on a real database, built by the composition root the server
 * uses, with a free key issued.
 *
 * @example const t = await startTestApp(); await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options);
  const { databaseUrl: _database, rateLimits: _limits, settings: _settings, ...overrides } = options;
  const composed = await composeWithLog(config, overrides);
  const storage = composed.service.storage;
  const issueKey: TestApp['issueKey'] = async (plan = 'free', limits = {}) => `Bearer ${(await issueApiKey(storage.apiKeys, { plan, ...limits })).key}`;
  return {
    ...composed,
    storage,
    auth: await issueKey(),
    databaseUrl: config.databaseUrl,
    metrics: composed.service.metrics,
    issueKey,
  };
}

/** The service composed with its log kept in memory, and a client that checks every response against its contracts. */
async function composeWithLog(config: Config, overrides: ComposeOverrides): Promise<Pick<TestApp, 'app' | 'api' | 'service' | 'logs' | 'close'>> {
  const log = memoryLog();
  const service = await compose(config, { ...overrides, logDestination: log.sink });
  return {
    app: service.app,
    api: apiClient(
      service.app,
      service.documents.map(({ document, basePath }) => ({ document, basePath })),
    ),
    service,
    logs: log.text,
    close: () => service.close(),
  };
}

/**
 * An app composed on a storage the test already has (often one with a
 * failure injected), without issuing a key. Closing it leaves the storage open.
 *
 * @example const down = await appOn({ ...t.storage, ping: () => Promise.reject(error) }); await down.api.get('/readyz').expect(503);
 */
export async function appOn(
  storage: Storage,
  options: Omit<TestAppOptions, 'storage' | 'databaseUrl'> & { logLevel?: Config['logLevel'] } = {},
): Promise<Pick<TestApp, 'app' | 'api' | 'service' | 'logs' | 'close'>> {
  const { logLevel, rateLimits, settings, ...overrides } = options;
  const config = testConfig({ ...(rateLimits && { rateLimits }), settings: { ...settings, ...(logLevel && { logLevel }) } });
  return composeWithLog(config, { ...overrides, storage });
}
