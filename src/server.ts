/**
 * Entry point: `node dist/src/server.js` (npm start). Reads and validates the
 * configuration, opens and migrates the database, serves, and shuts down
 * gracefully on SIGTERM / SIGINT.
 */
import './runtime/check-runtime';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDependencies } from './compose';
import { settleUrlParseDeprecation } from './runtime/legacy-url-parse';
import { handlers } from './handlers';
import { stubbedOperations } from './handlers/stub';
import { createHttpServer } from './runtime/http-server';
import { loadConfig, type Config } from './config';
import { loadSpec } from './contract/load-spec';
import { createLogger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { openStorage } from './storage/open-storage';
import { issueApiKey } from './auth/key-service';
import type { Storage } from './storage/storage';
import type * as RedisState from './shared-state/redis-state';
import type { Logger } from 'pino';

/**
 * Starts the server as `npm start` does. `overrides` are for measurement
 * harnesses (the benchmark's cost ledger); the service itself passes none.
 */
export async function startServer(env: NodeJS.ProcessEnv = process.env, overrides: Partial<AppDependencies> = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  settleUrlParseDeprecation();
  const metrics = createMetrics();

  // Handlers first, so a signal that arrives while starting also stops cleanly.
  let stop: (() => void) | undefined;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second Ctrl-C means "now"; a repeated SIGTERM from a supervisor does not cut requests short.
      if (signal !== 'SIGINT') return;
      logger.warn({ signal }, 'second SIGINT: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    if (stop) stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const storage = await openStorage(config.databaseUrl);
  const shared = await openSharedState(config, storage, logger, metrics).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  const closeAndExit = async (): Promise<never> => {
    await shared?.close();
    await storage.close();
    logger.info('stopped');
    process.exit(0);
  };
  if (stopping) await closeAndExit();
  await ensureFirstKey(storage, config);

  const stubs = stubbedOperations(handlers);
  if (config.mockResponses) {
    logger.info({ mocked: stubs }, `mock mode: ${stubs.length} stubbed operation(s) answer with examples from the contract (Prefer: code=, example= pick others)`);
  } else if (stubs.length > 0) {
    logger.info({ stubbed: stubs }, `${stubs.length} operation(s) not implemented yet answer 501 (npm run mock answers them with examples)`);
  }
  const app = createApp({
    storage,
    logger,
    validateResponses: config.validateResponses,
    mockResponses: config.mockResponses,
    logRequests: true,
    metrics,
    metricsAccess: config.metricsAccess,
    rateLimits: config.rateLimits,
    trustProxy: config.trustProxy,
    // OPENAPI_DIR (npm run dev: the last good copy of the contract); else openapi/openapi.yaml.
    ...(config.contractDir ? { spec: loadSpec(path.join(config.contractDir, 'openapi.yaml')) } : {}),
    ...shared?.appDependencies,
    ...overrides,
  });
  // Timeouts, connection cap and malformed-request answers (src/runtime/http-server.ts).
  const server = createHttpServer(app, config.httpLimits).listen(config.port, config.host);
  // While stopping, keep-alive clients are told to reconnect elsewhere, so
  // their sockets close after the response instead of holding shutdown open.
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    if (stopping) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  stop = () => {
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs).unref();
    server.close(() => {
      clearTimeout(force);
      void closeAndExit();
    });
    // Keep-alive connections with no request in flight would hold close() open.
    server.closeIdleConnections();
  };
  if (stopping) return stop();
  const { address, port } = server.address() as AddressInfo;
  logger.info(
    { address, port, database: storage.backend, rateLimitStore: shared ? 'redis' : 'memory', env: config.nodeEnv, node: process.version, mock: config.mockResponses },
    `listening on http://${address}:${port}`,
  );
}

/** Redis-backed shared state when REDIS_URL is set; loaded only then, so one instance never pays for ioredis. */
async function openSharedState(
  config: Config,
  storage: Storage,
  logger: Logger,
  metrics: Metrics,
): Promise<RedisState.SharedState | undefined> {
  if (!config.redisUrl) return undefined;
  const { openRedisState } = require('./shared-state/redis-state') as typeof RedisState;
  return openRedisState(config.redisUrl, storage.apiKeys, logger, config.redisKeyPrefix, (kind) =>
    metrics.redisErrors.inc({ kind }),
  );
}

/**
 * In development, a database with no keys gets one free key, printed once, so
 * `npm start` is usable at once. Never in production.
 */
async function ensureFirstKey(storage: Storage, config: Config): Promise<void> {
  if (config.nodeEnv === 'production' || (await storage.apiKeys.count()) > 0) return;
  const { key, record } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'first key (created by npm start)' });
  process.stdout.write(
    `\nNo API keys existed, so one was created (id ${record.id}, plan free). It is shown only this once:\n\n` +
      `  ${key}\n\n  curl -H "Authorization: Bearer ${key}" http://localhost:${config.port}/v1/pets\n\n` +
      'Create more with: npm run keys -- create --plan free --label NAME\n\n',
  );
}

if (require.main === module) {
  startServer().catch((error: unknown) => {
    console.error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  });
}
