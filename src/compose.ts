import cluster from 'node:cluster';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { DestinationStream } from 'pino';
import type { Config } from './config';
import { loadSpec, type OpenApiDocument } from './contract/load-spec';
import { routeTable } from './contract/route-table';
import { contractValidator, operationValidator } from './contract/validator';
import { registries } from './handlers';
import type { AnyHandlerRegistry, HandlerRegistry } from './handlers/types';
import { contractVersions, contractVersionsIn } from './contract/versions';
import { stubbedOperations } from './handlers/types/stub';
import { authenticate, requireCaller } from './auth/authenticate';
import { memoryStores, rateLimits } from './rate-limit/rate-limits';
import { MemoryBanList } from './rate-limit/ban-list';
import { limitUrlLength } from './guards/url-length';
import { jsonBody } from './guards/json-body';
import { openStorage } from './storage/open-storage';
import { repositoriesOf, type Storage } from './storage/storage';
import { timedStorage } from './storage/timed-storage';
import type * as RedisState from './shared-state/redis-state';
import type { SharedState } from './shared-state/shared-state';
import { clusterWorkerState } from './shared-state/cluster-state';
import { createLogger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { operationResolver } from './observability/operation-names';
import { assignRequestId, attachRequestLogger } from './observability/request-id';
import { requestObserver } from './observability/request-observer';
import { responseSampler } from './observability/response-sampling';
import { contractViolations } from './observability/contract-violations';
import { buildOperationMocks } from './mock/mock-responses';
import { mountPublicRoutes } from './public/public-routes';
import { withHooks, type PhaseHooks, type PhaseImplementations } from './pipeline/phases';
import { assemblePipeline, routeOf, type ServedApi } from './pipeline/operation-pipeline';
import { handleStage, serializeStage } from './pipeline/respond';
import { precomputeHeaders } from './pipeline/security-headers';
import { chain, fromMiddleware } from './pipeline/stage';
import { errorMapper, unknownRoute } from './pipeline/error-response';
import { sunsetStage } from './contract/sunset';
import { pageCursors } from './paging/page-cursors';
import { pageLinks } from './paging/page-links';
import { idempotentRequests } from './idempotency/idempotent-requests';

/**
 * What the tests and benchmarks may put in place of the defaults. The
 * server passes none.
 */
export interface CompositionSeams {
  /** The document of the first version (v1) to serve instead of openapi/v1/openapi.yaml. */
  contract?: OpenApiDocument;
  /** The first version's (v1) handlers instead of src/handlers' registry. */
  handlers?: HandlerRegistry;
  /** Every version to serve, instead of those of openapi/ (and `contract` / `handlers`). */
  versions?: ReadonlyArray<{ name: string; contract: OpenApiDocument; handlers: AnyHandlerRegistry }>;
  /** An open storage to serve (tests that inject failures); opened from `config.databaseUrl` by default, and then closed by `close()`. */
  storage?: Storage;
  /** Where log lines go; stdout by default. */
  logDestination?: DestinationStream;
  /** Measurement only: named phases wrapped or replaced (src/pipeline/phases.ts). */
  phaseHooks?: PhaseHooks;
  /** The clock (ms since epoch) of sunsets, idempotency records and the contract-violation log's once-a-minute limit; `Date.now` by default. */
  now?: () => number;
  /** The draws (in [0, 1)) that pick the responses checked after sending (`responseSampleRate`); `Math.random` by default. */
  random?: () => number;
}

/** The composed service: an Express app on its storage, with what runs beside it. */
export interface Service {
  readonly app: Express;
  readonly config: Config;
  /** The first version's document (what `/openapi.json` publishes). */
  readonly contract: OpenApiDocument;
  /** Every served version, oldest first. */
  readonly apis: readonly ServedApi[];
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The storage the app serves, every repository call timed. */
  readonly storage: Storage;
  /** Where rate-limit counts, bans and key changes are shared: this process, Redis, or the cluster primary (WORKERS=N). */
  readonly sharedState: 'memory' | SharedState['kind'];
  /** Operations whose handler is still a scaffolded stub. */
  readonly stubbed: readonly string[];
  /** Closes what `compose` opened (Redis, the database). */
  close(): Promise<void>;
}

/**
 * The one composition root: builds the whole service from its configuration.
 * The server (src/server.ts), the tests and the benchmarks all build it here,
 * so there is one copy of the wiring. The request phases run in the order
 * declared in src/pipeline/phases.ts.
 *
 * @example
 * const service = await compose(loadConfig(process.env));
 * service.app.listen(3000);
 */
export async function compose(config: Config, seams: CompositionSeams = {}): Promise<Service> {
  const logger = createLogger(config.logLevel, seams.logDestination, config.logFormat);
  const metrics = createMetrics();
  const versions = seams.versions ?? servedVersions(seams, config.contractDir);
  const apis: ServedApi[] = versions.map(({ name, contract }) => ({ name, contract, table: routeTable(contract) }));
  const handlersOf = new Map(versions.map((version) => [version.name, version.handlers]));
  const stubbedOf = new Map(versions.map((version) => [version.name, stubbedOperations(version.handlers)]));
  const stubbed = [...new Set([...stubbedOf.values()].flat())];
  // Built before anything is opened: an invalid example stops the start here.
  const mocksOf = new Map(config.mockResponses ? versions.map((version) => [version.name, buildOperationMocks(version.contract, stubbedOf.get(version.name)!)] as const) : []);

  const opened = seams.storage ?? (await openStorage(config.databaseUrl));
  const closeStorage = async (): Promise<void> => {
    if (!seams.storage) await opened.close();
  };
  let shared: SharedState | undefined;
  try {
    shared = await openSharedState(config, opened, logger, metrics);
    const storage = timedStorage(opened, (operation) => {
      const child = metrics.dbQueryDuration.labels({ operation, backend: opened.backend });
      return (seconds) => child.observe(seconds);
    });
    const { poolStats } = storage;
    if (poolStats) metrics.watchPool(storage.backend, poolStats);

    const app = express();
    app.disable('x-powered-by');
    // API responses are small and personal: a per-response hash (ETag) costs
    // CPU on every request and no client revalidates them.
    app.set('etag', false);
    app.set('trust proxy', config.trustProxy);
    attachRequestLogger(app, logger);

    const operationOf = operationResolver(apis);
    const observe = requestObserver({
      metrics,
      operationOf,
      // Skipped entirely when info is off (LOG_LEVEL=warn).
      ...(config.accessLog && logger.isLevelEnabled('info') && { accessLog: logger }),
    });
    const now = seams.now ?? Date.now;
    // Only when sampling is on: at 0 no request pays for it, and no schema is compiled.
    const sampleResponse =
      config.responseSampleRate > 0
        ? responseSampler({
            rate: config.responseSampleRate,
            check: contractViolations({ apis, operationOf, metrics, logger, now }),
            logger,
            ...(seams.random && { random: seams.random }),
          })
        : undefined;
    const validatorOptions = { validateResponses: config.validateResponses };
    const cursorSecret = await storage.secrets.get('page-cursors');
    if (!cursorSecret) throw new Error('the database has no page-cursors secret (migration 0003 did not run?)');
    const idempotency = idempotentRequests(storage.idempotencyKeys, { ...config.idempotency, now });
    const cursors = pageCursors(cursorSecret);
    const repositories = repositoriesOf(storage);
    // Per version: the handlers, the mocks, and the context (links carry the version's base path).
    const handleOptionsOf = new Map(
      apis.map((api) => {
        const mocks = mocksOf.get(api.name);
        return [api.name, { context: { ...repositories, pages: pageLinks(api.table.basePath, cursors), idempotency }, ...(mocks && { mocks }) }] as const;
      }),
    );
    const phases: PhaseImplementations = {
      observe: (req, res) => {
        assignRequestId(req, res);
        observe(req, res);
        sampleResponse?.(req, res);
      },
      'security-headers': precomputeHeaders(helmet()),
      route: routeOf(apis.map((api) => api.table)),
      authenticate: authenticate({
        apiKeys: storage.apiKeys,
        cacheTtlMs: config.keyCacheTtlMs,
        ...(shared && { keyChanges: shared.keyChanges }),
        observeCache: (result) => metrics.keyCacheLookups.inc({ result }),
      }),
      'rate-limit': rateLimits(config.rateLimits, shared?.stores ?? memoryStores(), shared?.banList ?? new MemoryBanList(storage.apiKeys), logger, {
        refused: (plan, window) => metrics.rateLimitRefusals.inc({ plan, window }),
        banned: (plan, window) => metrics.rateLimitBans.inc({ plan, window }),
      }),
      'request-size': limitUrlLength(),
      'require-caller': requireCaller,
      sunset: (op, api) => {
        // One counter child per plan, found by name: prom-client would hash the labels on every call.
        const byPlan = new Map<string, { inc(): void }>();
        return sunsetStage(op, {
          now,
          deprecatedCall: (operation, plan) => {
            let child = byPlan.get(plan);
            if (!child) byPlan.set(plan, (child = metrics.deprecatedCalls.labels({ operation, plan, version: api.name })));
            child.inc();
          },
        });
      },
      body: jsonBody(),
      validate: (op, api) =>
        chain(
          op
            ? operationValidator(api.contract, api.table.basePath, op, validatorOptions)
            : contractValidator(api.contract, api.table.basePath, validatorOptions).map(fromMiddleware),
        ),
      handle: (op, api) => handleStage(op, handlersOf.get(api.name)!, handleOptionsOf.get(api.name)!),
      serialize: serializeStage(config.validateResponses),
    };
    const pipeline = assemblePipeline(apis, withHooks(phases, seams.phaseHooks));
    app.use(pipeline.dispatch);
    for (const { basePath, handler } of pipeline.unmatched) app.use(basePath, handler);
    mountPublicRoutes(app, {
      apis,
      metrics,
      metricsAccess: config.metricsAccess,
      readinessChecks: { database: () => storage.ping(), ...(shared && { [shared.kind]: shared.ping.bind(shared) }) },
      logger,
    });
    app.use(unknownRoute);
    app.use(errorMapper(logger, operationOf));
    const purge = purgeExpiredKeys(storage, now, logger);

    return Object.freeze({
      app,
      config,
      contract: apis[0]!.contract,
      apis,
      logger,
      metrics,
      storage,
      sharedState: shared?.kind ?? 'memory',
      stubbed,
      close: async () => {
        clearInterval(purge);
        await shared?.close();
        await closeStorage();
      },
    });
  } catch (error) {
    // Nothing opened here outlives a start that failed (a contract the validator refuses, a database without its secret).
    await shared?.close();
    await closeStorage();
    throw error;
  }
}

/** The versions of openapi/ with src/handlers' registries, the first one's document and handlers replaced by the seams'. */
function servedVersions(seams: CompositionSeams, contractDir: string | undefined): Array<{ name: string; contract: OpenApiDocument; handlers: AnyHandlerRegistry }> {
  return (contractDir ? contractVersionsIn(contractDir) : contractVersions()).map((version, index) => {
    const registry = (registries as Record<string, AnyHandlerRegistry | undefined>)[version.name];
    if (!registry) throw new Error(`openapi/${version.name}/openapi.yaml has no handler registry in src/handlers/index.ts: run npm run scaffold`);
    return {
      name: version.name,
      contract: (index === 0 && seams.contract) || loadSpec(version.document),
      handlers: (index === 0 && (seams.handlers as AnyHandlerRegistry | undefined)) || registry,
    };
  });
}

/** How often expired Idempotency-Keys are deleted. */
const PURGE_INTERVAL_MS = 3_600_000;

/** Deletes expired Idempotency-Keys now and every hour (a failure is logged and retried next time). */
function purgeExpiredKeys(storage: Storage, now: () => number, logger: Logger): NodeJS.Timeout {
  const purge = (): void => {
    storage.idempotencyKeys.purgeExpired(new Date(now())).catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'could not delete expired Idempotency-Keys'));
  };
  purge();
  return setInterval(purge, PURGE_INTERVAL_MS).unref();
}

/**
 * Redis-backed shared state when REDIS_URL is set (loaded only then, so one
 * instance never pays for ioredis); else, in a worker of `WORKERS=N`, the
 * cluster primary's; else none (this process counts in memory).
 */
async function openSharedState(config: Config, storage: Storage, logger: Logger, metrics: Metrics): Promise<SharedState | undefined> {
  if (!config.redisUrl) return cluster.isWorker ? clusterWorkerState(storage.apiKeys) : undefined;
  const { openRedisState } = require('./shared-state/redis-state') as typeof RedisState;
  return openRedisState(config.redisUrl, storage.apiKeys, logger, config.redisKeyPrefix, (kind) => metrics.redisErrors.inc({ kind }));
}
