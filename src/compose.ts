import cluster from 'node:cluster';
import express, { type Express, type Request } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { DestinationStream } from 'pino';
import type { Config } from './config';
import { OPENAPI_DIR } from './project';
import {
  type OpenApiDocument,
  loadContract,
  contractVersionsIn,
  servedApi,
  type ServedApi,
  schemaValidator,
  type SchemaValidator,
  deref,
} from './engine/contract';
import {
  contractRefusals,
  sunsetStage,
  type PhaseImplementations,
  assemblePipeline,
  routeOf,
  handleStage,
  serializeStage,
  type StreamSettings,
  precomputeHeaders,
  errorMapper,
  unknownRoute,
  streamAdmission,
} from './engine/pipeline';
import { stubbedOperations, type AnyHandlerRegistry } from './engine/handlers';
import { buildOperationMocks } from './engine/mock';
import { parametersStage, bodyStage, requestValidation, limitUrlLength } from './engine/request';
import { negotiation, representations } from './engine/response';
import { authenticate, requireCaller, resolvedSecurity, servedSchemes, tokenVerifier } from './engine/security';
import { registries } from './service/handlers';
import type { HandlerRegistry, Version } from './service/handlers/types';
import { keyCheck } from './service/keys/key-check';
import { chargeOneRequest, memoryStores, rateLimits } from './service/rate-limit/rate-limits';
import { MemoryBanList } from './service/rate-limit/ban-list';
import { addressKey, RefusedAddresses } from './service/rate-limit/refused-addresses';
import { openStorage } from './service/storage/open-storage';
import { repositoriesOf, type Storage } from './service/storage/storage';
import { timedStorage } from './service/storage/timed-storage';
import type * as RedisState from './service/shared-state/redis-state';
import type { SharedState } from './service/shared-state/shared-state';
import { clusterWorkerState } from './service/shared-state/cluster-state';
import { pageCursors } from './service/paging/page-cursors';
import { pageLinks } from './service/paging/page-links';
import { idempotentRequests } from './service/idempotency/idempotent-requests';
import { createLogger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { operationResolver } from './observability/operation-names';
import { assignRequestId, attachRequestLogger } from './observability/request-id';
import { requestObserver } from './observability/request-observer';
import { responseSampler } from './observability/response-sampling';
import { contractViolations } from './observability/contract-violations';
import { mountPublicRoutes } from './public/public-routes';
import { contextOf, RequestContext, writeRecordedHeaders } from './engine/context';

/** The realm of every authentication challenge. */
const REALM = 'pet-adoption';

/**
 * What the tests and benchmarks may put in place of the defaults (a contract,
 * handlers, a storage with a fault injected, a clock). The server passes none.
 */
export interface ComposeOverrides {
  /** The document of the first version (v1) to serve instead of openapi/v1/openapi.yaml (bundled: local `$ref`s only). */
  contract?: OpenApiDocument;
  /** The first version's (v1) handlers instead of src/service/handlers' registry. */
  handlers?: HandlerRegistry;
  /** Every version to serve, instead of those of openapi/ (and `contract` / `handlers`). */
  versions?: ReadonlyArray<ServedVersion>;
  /** An open storage to serve (tests that inject failures); opened from `config.databaseUrl` by default, and then closed by `close()`. */
  storage?: Storage;
  /** Where log lines go; stdout by default. */
  logDestination?: DestinationStream;
  /** The clock (ms since epoch) of sunsets, idempotency records, bans and rate-limit headers, readiness results, and the logs' once-per-interval limits; `Date.now` by default. */
  now?: () => number;
  /** The draws (in [0, 1)) that pick the responses checked after sending (`responseSampleRate`); `Math.random` by default. */
  random?: () => number;
}

/** One major version to serve: its name (`v1`, served under `/v1`), its bundled document and its handlers. */
export interface ServedVersion {
  name: string;
  contract: OpenApiDocument;
  handlers: AnyHandlerRegistry;
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
  /**
   * Tells what is still streaming that the server is stopping (called first
   * by the server's stop): open Server-Sent Events streams end at once, their
   * clients reconnecting elsewhere with Last-Event-ID.
   */
  beginShutdown(): void;
  /** Closes what `compose` opened (Redis, the database). */
  close(): Promise<void>;
}

/**
 * The one composition root: builds the whole service from its configuration.
 * The server (src/server.ts), the tests and the benchmarks all build it here,
 * so there is one copy of the wiring. It reads as the start does: the
 * contracts, then what the service keeps open, then the engine's phases with
 * the service plugged in, then the app.
 *
 * @example
 * const service = await compose(loadConfig(process.env));
 * service.app.listen(3000);
 */
export async function compose(config: Config, overrides: ComposeOverrides = {}): Promise<Service> {
  // The contracts: every version, refused by name at start where it cannot be served; the mocks are built (and checked) before anything is opened.
  const versions = overrides.versions ?? (await servedVersions(overrides, config.contractDir));
  const apis = versions.map(({ name, contract }) => servedApi(name, contract));
  const warnings = refuseWhatCannotBeServed(apis, config);
  const logger = createLogger(config.logLevel, overrides.logDestination, config.logFormat, secretNames(apis));
  for (const warning of warnings) logger.warn({ refused: warning }, warning);
  const metrics = createMetrics();
  const mocks = config.mockResponses
    ? new Map(
        versions.map((version) => [
          version.name,
          buildOperationMocks(version.contract, stubbedOperations(version.handlers), {
            warn: (message) => logger.warn({ version: version.name, mock: 'invalid example' }, message),
          }),
        ]),
      )
    : undefined;

  // What the service keeps open: the database (every query timed) and the state instances share.
  const opened = overrides.storage ?? (await openStorage(config.databaseUrl));
  const closeStorage = async (): Promise<void> => {
    if (!overrides.storage) await opened.close();
  };
  let shared: SharedState | undefined;
  try {
    shared = await openSharedState(config, opened, logger, metrics);
    const storage = timedStorage(opened, (operation) => {
      const series = metrics.batched.histogramSeries(metrics.dbQueryDuration, { operation, backend: opened.backend });
      return (seconds) => series.observe(seconds);
    });
    if (storage.poolStats) metrics.watchPool(storage.backend, storage.poolStats);

    // The engine's phases, the service plugged in: its credentials, its limits, its handlers.
    const now = overrides.now ?? Date.now;
    const operationOf = operationResolver(apis);
    const shutdown = new AbortController();
    const phases = await requestPhases({
      config,
      overrides,
      versions,
      apis,
      mocks,
      storage,
      shared,
      logger,
      metrics,
      operationOf,
      now,
      shutdown: shutdown.signal,
    });

    // The app: the pipeline, the routes outside the contract, the error mapper.
    const app = express();
    app.disable('x-powered-by');
    // API responses are small and personal: a per-response hash (ETag) costs CPU on every request and no client revalidates them.
    app.set('etag', false);
    app.set('trust proxy', config.trustProxy);
    attachRequestLogger(app, logger);
    // Each response's head is written from the headers its phases recorded in its context, in one writeHead.
    writeRecordedHeaders(app.response);
    app.use(assemblePipeline(apis, phases));
    mountPublicRoutes(app, {
      apis,
      metrics,
      metricsAccess: config.metricsAccess,
      readinessChecks: { database: () => storage.ping(), ...(shared && { [shared.kind]: shared.ping.bind(shared) }) },
      logger,
      // The pipeline's own stage: a document fetched without a key counts in the same window as an API request without one.
      limit: phases['rate-limit'],
      now,
    });
    app.use(unknownRoute);
    app.use(errorMapper(logger, operationOf, now));
    const purge = purgeExpiredKeys(storage, now, logger);

    const sharedState = shared;
    return Object.freeze({
      app,
      config,
      contract: apis[0]!.contract,
      apis,
      logger,
      metrics,
      storage,
      sharedState: sharedState?.kind ?? 'memory',
      stubbed: [...new Set(versions.flatMap((version) => stubbedOperations(version.handlers)))],
      beginShutdown: () => shutdown.abort(),
      close: async () => {
        shutdown.abort();
        clearInterval(purge);
        await sharedState?.close();
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

/** What the phases are built from. */
interface PhaseParts {
  config: Config;
  overrides: ComposeOverrides;
  versions: readonly ServedVersion[];
  apis: readonly ServedApi[];
  mocks: ReadonlyMap<string, ReturnType<typeof buildOperationMocks>> | undefined;
  storage: Storage;
  shared: SharedState | undefined;
  logger: Logger;
  metrics: Metrics;
  operationOf: (req: Request) => string;
  now: () => number;
  /** Aborted when the server begins to stop. */
  shutdown: AbortSignal;
}

/**
 * The implementation of every phase of src/engine/pipeline/phases.ts: the
 * engine's stages, with the service's key check, rate limits and handlers
 * (and their context: repositories, page links, idempotency) plugged in.
 */
async function requestPhases(parts: PhaseParts): Promise<PhaseImplementations> {
  const { config, overrides, versions, apis, mocks, storage, shared, logger, metrics, operationOf, now, shutdown } = parts;
  const observe = requestObserver({
    metrics,
    operationOf,
    // Skipped entirely when info is off (LOG_LEVEL=warn).
    ...(config.accessLog && logger.isLevelEnabled('info') && { accessLog: logger }),
  });
  // Only when sampling is on: at 0 no request pays for it, and no schema is compiled.
  const sampleResponse =
    config.responseSampleRate > 0
      ? responseSampler({
          rate: config.responseSampleRate,
          check: contractViolations({ apis, operationOf, metrics, logger, now }),
          logger,
          ...(overrides.random && { random: overrides.random }),
        })
      : undefined;

  // The service's credentials: API keys (cached, a refused address's unknown keys never looked up) and access tokens.
  const refusedAddresses = new RefusedAddresses();
  const cacheLookups = {
    hit: metrics.batched.counterSeries(metrics.keyCacheLookups, { result: 'hit' }),
    miss: metrics.batched.counterSeries(metrics.keyCacheLookups, { result: 'miss' }),
  };
  const check = keyCheck({
    apiKeys: storage.apiKeys,
    cacheTtlMs: config.keyCacheTtlMs,
    ...(shared && { keyChanges: shared.keyChanges }),
    observeCache: (result) => cacheLookups[result].inc(),
    tokenPlan: config.oauth2.plan,
    beforeLookup: refusedAddresses.guard(config.rateLimits.ipPerMinute),
  });
  const { issuer, audience, maxTokenAgeSeconds, tokenType } = config.oauth2;
  const keys = tokenKeysOf(apis, config);
  const verifyToken = keys ? tokenVerifier({ keys, issuer, audience, maxTokenAgeSeconds, tokenType }) : undefined;

  // The service's handlers, per version, with what they use besides the request (links carry the version's base path).
  const cursorSecret = await storage.secrets.get('page-cursors');
  if (!cursorSecret) throw new Error('the database has no page-cursors secret (migration 0003 did not run?)');
  const cursors = pageCursors(cursorSecret);
  const handlerContext = { ...repositoriesOf(storage), idempotency: idempotentRequests(storage.idempotencyKeys, { ...config.idempotency, now }) };
  const handlersOf = new Map(versions.map((version) => [version.name, version.handlers]));
  const handleOptionsOf = new Map(
    apis.map((api) => {
      const versionMocks = mocks?.get(api.name);
      return [api.name, { context: { ...handlerContext, pages: pageLinks(api.basePath, cursors) }, ...(versionMocks && { mocks: versionMocks }) }] as const;
    }),
  );
  const requestSchemas = new Map(apis.map((api) => [api.name, schemaValidator(api.contract, { direction: 'request' })]));
  const validations = new Map(apis.map((api) => [api.name, requestValidation(api.contract, api.basePath, { validateResponses: config.validateResponses })]));
  const streamSettings = new Map(apis.map((api) => [api.name, streamSettingsOf(api, config, shutdown, metrics, logger)]));
  // One set of counters for the rate limits and the weight of streams.
  const rateLimitStores = shared?.stores ?? memoryStores();

  return {
    observe: (req, res) => {
      req.context = new RequestContext();
      assignRequestId(req, res);
      observe(req, res);
      sampleResponse?.(req, res);
    },
    'security-headers': precomputeHeaders(helmet()),
    route: routeOf(apis.map((api) => api.table)),
    authenticate: (op, api) => authenticate({ ...resolvedSecurity(api.contract, op), check, verifyToken, realm: REALM }),
    'rate-limit': rateLimits(
      config.rateLimits,
      rateLimitStores,
      shared?.banList ?? new MemoryBanList(storage.apiKeys),
      logger,
      {
        refused: (plan, window) => metrics.rateLimitRefusals.inc({ plan, window }),
        banned: (plan, window) => metrics.rateLimitBans.inc({ plan, window }),
      },
      now,
      refusedAddresses,
    ),
    'url-length': limitUrlLength(),
    'require-caller': requireCaller,
    sunset: (op, api) => op && sunsetStage(op, { now, deprecatedCall: deprecatedCallCounter(metrics, api.name) }),
    parameters: (op, api) =>
      op &&
      parametersStage(api.contract, op, {
        validator: requestSchemas.get(api.name)!,
        check: validations.get(api.name)!.parameters(op),
        apiKeyQueryNames: apiKeyQueryNames(api),
      }),
    body: (op, api) =>
      op &&
      bodyStage(api.contract, op, {
        schemas: requestSchemas.get(api.name)!,
        maxStreamBytes: config.streams.maxRequestBytes,
        maxStreamItems: config.streams.maxRequestItems,
      }),
    validate: (op, api) => op && validations.get(api.name)!.body(op),
    negotiate: (op, api) => op && negotiation(representations(api.contract, op)),
    'stream-admission': streamAdmission({
      limits: config.streams,
      clientOf: (req) => contextOf(req).caller?.principal ?? addressKey(req),
      charge: chargeOneRequest(config.rateLimits, rateLimitStores, logger),
      refused: (scope) => metrics.streamRefusals.inc({ scope }),
    }),
    handle: (op, api) =>
      op &&
      handleStage(op, handlersOf.get(api.name)![op.operationId], { ...handleOptionsOf.get(api.name)!, streams: representations(api.contract, op).streams }),
    serialize: (op, api) =>
      op && serializeStage(representations(api.contract, op), { validateResponses: config.validateResponses, streams: streamSettings.get(api.name)! }),
  };
}

/** What the streams of one version share: its response schemas (compiled on first use), the settings, and where an invalid item is reported. */
function streamSettingsOf(api: ServedApi, config: Config, shutdown: AbortSignal, metrics: Metrics, logger: Logger): StreamSettings {
  let schemas: SchemaValidator | undefined;
  return {
    get schemas() {
      schemas ??= schemaValidator(api.contract, { direction: 'response', allErrors: true });
      return schemas;
    },
    heartbeatMs: config.streams.heartbeatMs,
    stallMs: config.streams.stallMs,
    maxDurationMs: config.streams.maxDurationMs,
    shutdown,
    invalidItem: (req, index, problem) => {
      const operation = contextOf(req).operationName ?? 'unmatched';
      metrics.streamItemViolations.inc({ operation });
      logger.warn({ requestId: req.id, operation, item: index, problem }, `item ${index} of the stream breaks the contract: ${problem}`);
    },
    cut: (req, reason) => {
      const operation = contextOf(req).operationName ?? 'unmatched';
      const why =
        reason === 'stalled' ? `its reader left the socket full for ${config.streams.stallMs / 1000} s` : `it lasted ${config.streams.maxDurationMs / 1000} s`;
      logger.warn({ requestId: req.id, operation, reason }, `stream cut: ${why}`);
    },
  };
}

/**
 * Where access tokens' keys are found: `OAUTH2_JWKS_URL`; else, when a
 * document's oauth2 scheme gives its authorization server's metadata (3.2's
 * `oauth2MetadataUrl`, RFC 8414) and `OAUTH2_AUDIENCE` says which tokens are
 * for this API, that metadata; else nowhere (token requirements answer 401
 * saying why).
 */
function tokenKeysOf(apis: readonly ServedApi[], config: Config): { jwksUrl: string } | { metadataUrl: string } | undefined {
  if (config.oauth2.jwksUrl !== undefined) return { jwksUrl: config.oauth2.jwksUrl };
  if (config.oauth2.audience === undefined) return undefined;
  for (const api of apis) {
    for (const raw of Object.values(api.contract.components?.securitySchemes ?? {})) {
      const scheme = deref(api.contract, raw) as { type?: unknown; oauth2MetadataUrl?: unknown };
      if (scheme.type === 'oauth2' && typeof scheme.oauth2MetadataUrl === 'string' && /^https?:\/\//.test(scheme.oauth2MetadataUrl))
        return { metadataUrl: scheme.oauth2MetadataUrl };
    }
  }
  return undefined;
}

/** Counts a deprecated operation's calls by plan: one batched counter series per plan, found by name. */
function deprecatedCallCounter(metrics: Metrics, version: string): (operation: string, req: Request) => void {
  const byPlan = new Map<string, { inc(): void }>();
  return (operation, req) => {
    const plan = contextOf(req).caller?.plan ?? 'none';
    let child = byPlan.get(plan);
    if (!child) {
      child = metrics.batched.counterSeries(metrics.deprecatedCalls, { operation, plan, version });
      byPlan.set(plan, child);
    }
    child.inc();
  };
}

/**
 * Stops the start on what a document says that cannot be served (naming the
 * file, the operation, the reason); returns what is refused while the rest
 * is served, for the log.
 */
function refuseWhatCannotBeServed(apis: readonly ServedApi[], config: Config): string[] {
  const warnings: string[] = [];
  const errors: string[] = [];
  for (const api of apis) {
    const found = contractRefusals(api.contract, { label: `openapi/${api.name}/openapi.yaml`, tokensVerifiable: tokenKeysOf(apis, config) !== undefined });
    errors.push(...found.errors);
    warnings.push(...found.warnings);
  }
  if (errors.length > 0) throw new Error(`the contract cannot be served:\n  ${errors.join('\n  ')}`);
  return warnings;
}

/** The query parameters that carry API keys (apiKey schemes `in: query`): known to every operation's parameter check. */
function apiKeyQueryNames(api: ServedApi): string[] {
  return [...servedSchemes(api.contract.components?.securitySchemes).values()].flatMap((scheme) =>
    scheme.type === 'apiKey' && scheme.in === 'query' ? [scheme.parameter] : [],
  );
}

/** Where the served documents carry credentials besides `Authorization`: apiKey headers, query parameters and cookies, never logged. */
function secretNames(apis: readonly ServedApi[]): string[] {
  return [
    ...new Set(
      apis.flatMap((api) =>
        [...servedSchemes(api.contract.components?.securitySchemes).values()].flatMap((scheme) => (scheme.type === 'apiKey' ? [scheme.parameter] : [])),
      ),
    ),
  ];
}

/**
 * A registry for every version of the contract: a version added to openapi/
 * without one (npm run scaffold writes it) is a compile error here, naming
 * the version and the operations it needs.
 */
const everyVersion: { readonly [V in Version]: HandlerRegistry<V> } = registries;

/** The versions of openapi/ (bundled) with src/service/handlers' registries, the first one's document and handlers replaced by the overrides'. */
async function servedVersions(overrides: ComposeOverrides, contractDir: string | undefined): Promise<ServedVersion[]> {
  return Promise.all(
    contractVersionsIn(contractDir ?? OPENAPI_DIR).map(async (version, index) => {
      const registry = (everyVersion as Record<string, AnyHandlerRegistry | undefined>)[version.name];
      if (!registry) throw new Error(`openapi/${version.name}/openapi.yaml has no handler registry in src/service/handlers/index.ts: run npm run scaffold`);
      return {
        name: version.name,
        contract: (index === 0 && overrides.contract) || (await loadContract(version.document)),
        handlers: (index === 0 && (overrides.handlers as AnyHandlerRegistry | undefined)) || registry,
      };
    }),
  );
}

/** How often expired Idempotency-Keys are deleted. */
const PURGE_INTERVAL_MS = 3_600_000;

/** Deletes expired Idempotency-Keys now and every hour (a failure is logged and retried next time). */
function purgeExpiredKeys(storage: Storage, now: () => number, logger: Logger): NodeJS.Timeout {
  const purge = (): void => {
    storage.idempotencyKeys
      .purgeExpired(new Date(now()))
      .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'could not delete expired Idempotency-Keys'));
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
  const { openRedisState } = require('./service/shared-state/redis-state') as typeof RedisState;
  return openRedisState(config.redisUrl, storage.apiKeys, logger, config.redisKeyPrefix, (kind) => metrics.redisErrors.inc({ kind }));
}
