import type { Express } from 'express';
import type { DestinationStream, Logger } from 'pino';
import { createEngine, credentialNames, type Engine, type OpenApiDocument } from '@spec-first/engine';
import type { Config } from './config';
import { servedVersions, type ServedVersion } from './versions';
import { handlerContexts, type HandlerRegistry } from './service/handlers';
import { keyCheck, type Caller } from './service/keys';
import { chargeOneRequest, clientKey, MemoryBanList, memoryStores, rateLimits, RefusedAddresses } from './service/rate-limit';
import { openStorage, timedStorage, type Storage } from './service/storage';
import { openSharedState, type SharedState } from './service/shared-state';
import { purgeExpiredKeys } from './service/idempotency';
import { createLogger, createMetrics, engineHooks, requestObserver, startViolationSeries, type Metrics } from './observability';
import { metricsRoute, readinessRoute } from './public';

/** What tests and benchmarks may put in place of the defaults (a contract, handlers, a faulty storage, a clock); the server passes none. */
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

/** The composed service: the engine's app on the store's storage, with what runs beside it. */
export interface Service {
  readonly app: Express;
  readonly config: Config;
  /** Every served version (`v1` under `/v1`), oldest first, with its document. */
  readonly documents: Engine['documents'];
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The storage the app serves, every repository call timed. */
  readonly storage: Storage;
  /** Where rate-limit counts, bans and key changes are shared: this process, Redis, or the cluster primary (WORKERS=N). */
  readonly sharedState: 'memory' | SharedState['kind'];
  /** Operations whose handler is still a scaffolded stub. */
  readonly stubbed: readonly string[];
  /** Ends open Server-Sent Events streams at once (their clients reconnect elsewhere): the server's stop calls it first. */
  beginShutdown(): void;
  /** Closes what `compose` opened (Redis, the database). */
  close(): Promise<void>;
}

/**
 * The one composition root of the pet store (the server, the tests and the benchmarks all build it): its documents and handlers,
 * its storage and shared state, its keys and plans, its limits, and the engine that serves them.
 *
 * @example
 * const service = await compose(loadConfig(process.env));
 * service.app.listen(3000);
 */
export async function compose(config: Config, overrides: ComposeOverrides = {}): Promise<Service> {
  const versions = overrides.versions ?? (await servedVersions(config.contractDir, overrides));
  const logger = createLogger(config.logLevel, overrides.logDestination, config.logFormat, credentialNames(versions.map((version) => version.contract)));
  const metrics = createMetrics();
  const now = overrides.now ?? Date.now;

  // What the store keeps open: the database (every query timed) and the state instances share.
  const opened = overrides.storage ?? (await openStorage(config.databaseUrl));
  let shared: SharedState | undefined;
  try {
    shared = await openSharedState(config, opened.apiKeys, logger, (kind) => metrics.redisErrors.inc({ kind }));
    const storage = timedStorage(opened, metrics.queryTimer(opened.backend));
    if (storage.poolStats) metrics.watchPool(storage.backend, storage.poolStats);

    // The keys and plans: API keys looked up (cached; a refused address's unknown keys never are), tokens' subjects on the token plan.
    const refusedAddresses = new RefusedAddresses();
    const credentials = keyCheck({
      apiKeys: storage.apiKeys,
      cacheTtlMs: config.keyCacheTtlMs,
      ...(shared && { keyChanges: shared.keyChanges }),
      observeCache: metrics.keyCacheObserver(),
      tokenPlan: config.oauth2.plan,
      beforeLookup: refusedAddresses.guard(config.rateLimits.ipPerMinute),
    });

    // The limits: per plan and per address, counted where every instance sees them, and what a stream weighs.
    const stores = shared?.stores ?? memoryStores();
    const bans = shared?.banList ?? new MemoryBanList(storage.apiKeys);

    // What the handlers use besides the request: the repositories, page links, Idempotency-Keys.
    const contextOf = await handlerContexts(storage, { idempotency: config.idempotency, now });

    const { plan: _plan, ...tokens } = config.oauth2;
    const engine = await createEngine<Caller>({
      documents: versions.map(({ contract, ...version }) => ({ ...version, document: contract, context: contextOf(version.name) })),
      credentials,
      tokens,
      realm: 'pet-adoption',
      observe: requestObserver({ metrics, ...(config.accessLog && logger.isLevelEnabled('info') && { accessLog: logger }) }),
      rateLimit: rateLimits(config.rateLimits, stores, bans, logger, metrics.rateLimitObserver(), now, refusedAddresses),
      streamClient: clientKey,
      streams: config.streams,
      validateResponses: config.validateResponses,
      responseSampleRate: config.responseSampleRate,
      mock: config.mockResponses,
      routes: {
        '/readyz': readinessRoute({ database: () => storage.ping(), ...(shared && { [shared.kind]: shared.ping.bind(shared) }) }, logger, now),
        '/metrics': metricsRoute(metrics, config.metricsAccess),
      },
      hooks: {
        ...engineHooks({ metrics, logger, streams: config.streams, now }),
        charge: chargeOneRequest(config.rateLimits, stores, logger),
      },
      logger,
      now,
      ...(overrides.random && { random: overrides.random }),
    });
    for (const { document, kind, message } of engine.warnings)
      logger.warn(kind === 'refused' ? { refused: message } : { version: document, mock: kind }, message);
    if (config.responseSampleRate > 0) startViolationSeries(metrics, engine.operations);
    engine.app.set('trust proxy', config.trustProxy);
    const purge = purgeExpiredKeys(storage.idempotencyKeys, now, logger);

    const sharedState = shared;
    return Object.freeze({
      app: engine.app,
      config,
      documents: engine.documents,
      logger,
      metrics,
      storage,
      sharedState: sharedState?.kind ?? 'memory',
      stubbed: engine.stubbed,
      beginShutdown: () => engine.beginShutdown(),
      close: async () => {
        engine.beginShutdown();
        clearInterval(purge);
        await sharedState?.close();
        if (!overrides.storage) await opened.close();
      },
    });
  } catch (error) {
    // Nothing opened here outlives a start that failed (a contract the engine refuses, a database without its secret).
    await shared?.close();
    if (!overrides.storage) await opened.close();
    throw error;
  }
}
