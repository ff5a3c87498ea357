import type { Express } from 'express';
import type { DestinationStream, Logger } from 'pino';
import { createEngine, credentialNames, type Engine, type OpenApiDocument } from '@spec-first/engine';
import type { Config } from './config';
import { servedVersions, type ServedVersion } from './versions';
import type { HandlerRegistry } from './service/handlers/types';
import { keyCheck } from './service/keys/key-check';
import type { Caller } from './service/keys/caller';
import { chargeOneRequest, memoryStores, rateLimits } from './service/rate-limit/rate-limits';
import { MemoryBanList } from './service/rate-limit/ban-list';
import { addressKey, RefusedAddresses } from './service/rate-limit/refused-addresses';
import { openStorage } from './service/storage/open-storage';
import { repositoriesOf, type Storage } from './service/storage/storage';
import { timedStorage } from './service/storage/timed-storage';
import type { SharedState } from './service/shared-state/shared-state';
import { openSharedState } from './service/shared-state/open-shared-state';
import { pageCursors } from './service/paging/page-cursors';
import { pageLinks } from './service/paging/page-links';
import { idempotentRequests } from './service/idempotency/idempotent-requests';
import { purgeExpiredKeys } from './service/idempotency/purge-expired';
import { createLogger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { engineHooks, startViolationSeries } from './observability/engine-hooks';
import { requestObserver } from './observability/request-observer';
import { metricsRoute } from './public/metrics-route';
import { readinessRoute } from './public/readiness';

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
 * The one composition root of the pet store, which the server, the tests and
 * the benchmarks all build: its documents and handlers, then its storage and
 * shared state, its keys and plans, its limits, and the engine that serves
 * them.
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
    const storage = timedStorage(opened, (operation) => {
      const series = metrics.batched.histogramSeries(metrics.dbQueryDuration, { operation, backend: opened.backend });
      return (seconds) => series.observe(seconds);
    });
    if (storage.poolStats) metrics.watchPool(storage.backend, storage.poolStats);

    // The keys and plans: API keys looked up (cached; a refused address's unknown keys never are), tokens' subjects on the token plan.
    const refusedAddresses = new RefusedAddresses();
    const cacheLookups = {
      hit: metrics.batched.counterSeries(metrics.keyCacheLookups, { result: 'hit' }),
      miss: metrics.batched.counterSeries(metrics.keyCacheLookups, { result: 'miss' }),
    };
    const credentials = keyCheck({
      apiKeys: storage.apiKeys,
      cacheTtlMs: config.keyCacheTtlMs,
      ...(shared && { keyChanges: shared.keyChanges }),
      observeCache: (result) => cacheLookups[result].inc(),
      tokenPlan: config.oauth2.plan,
      beforeLookup: refusedAddresses.guard(config.rateLimits.ipPerMinute),
    });

    // The limits: per plan and per address, counted where every instance sees them, and what a stream weighs.
    const stores = shared?.stores ?? memoryStores();
    const rateLimit = rateLimits(
      config.rateLimits,
      stores,
      shared?.banList ?? new MemoryBanList(storage.apiKeys),
      logger,
      { refused: (plan, window) => metrics.rateLimitRefusals.inc({ plan, window }), banned: (plan, window) => metrics.rateLimitBans.inc({ plan, window }) },
      now,
      refusedAddresses,
    );

    // What the handlers use besides the request: the repositories, page links (with the version's base path), Idempotency-Keys.
    const cursorSecret = await storage.secrets.get('page-cursors');
    if (!cursorSecret) throw new Error('the database has no page-cursors secret (migration 0003 did not run?)');
    const cursors = pageCursors(cursorSecret);
    const shareable = { ...repositoriesOf(storage), idempotency: idempotentRequests(storage.idempotencyKeys, { ...config.idempotency, now }) };

    const { jwksUrl, issuer, audience, maxTokenAgeSeconds, tokenType } = config.oauth2;
    const engine = await createEngine<Caller>({
      documents: versions.map(({ name, contract, handlers }) => ({
        name,
        document: contract,
        handlers,
        context: { ...shareable, pages: pageLinks(`/${name}`, cursors) },
      })),
      credentials,
      tokens: { jwksUrl, issuer, audience, maxTokenAgeSeconds, tokenType },
      realm: 'pet-adoption',
      observe: requestObserver({ metrics, ...(config.accessLog && logger.isLevelEnabled('info') && { accessLog: logger }) }),
      rateLimit,
      streamClient: (req) => req.context?.caller?.principal ?? addressKey(req),
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
    for (const warning of engine.warnings) logger.warn(warning);
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
