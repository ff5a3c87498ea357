import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Storage } from './storage/storage';
import { handlers as defaultHandlers } from './handlers';
import type { HandlerRegistry } from './http/handler';
import { authenticate, requireCaller } from './auth/authenticate';
import { DEFAULT_RATE_LIMITS, memoryStores, rateLimits, type RateLimitSettings, type RateLimitStores } from './rate-limit/rate-limits';
import { MemoryBanList, type BanList } from './rate-limit/ban-list';
import type { KeyChanges } from './auth/key-changes';
import { readinessRoute } from './http/readiness';
import { contractValidator } from './http/validator';
import { mountDeprecationHeaders } from './http/deprecation-headers';
import { mountAnonymousAccess } from './http/anonymous-access';
import { mountOperations } from './http/routes';
import { stubbedOperations } from './http/stub';
import { buildOperationMocks } from './mock/mock-responses';
import { mountDocs } from './http/docs';
import { precomputeHeaders } from './http/static-headers';
import { limitUrlLength } from './http/url-length';
import { jsonBody } from './http/json-body';
import { errorMapper, unknownRoute } from './errors/error-mapper';
import { basePathOf } from './spec/base-path';
import { loadSpec, type OpenApiDocument } from './spec/load-spec';
import { createMetrics, type Metrics } from './observability/metrics';
import { metricsRoute, type MetricsAccess } from './observability/metrics-route';
import { operationResolver } from './observability/operation-names';
import { attachRequestLogger, requestIds } from './observability/request-id';
import { observeRequests } from './observability/request-observer';
import { timedStorage } from './storage/timed-storage';

export interface AppDependencies {
  storage: Storage;
  logger: Logger;
  /** Validate every handler response against the contract (a mismatch becomes a 500 and a log line). */
  validateResponses: boolean;
  /** Log one line per request (at info level): the access log. */
  logRequests?: boolean;
  /** This app's Prometheus metrics; a fresh registry by default (one per app). */
  metrics?: Metrics;
  /** Who may read GET /metrics; open by default (development and tests). */
  metricsAccess?: MetricsAccess;
  /** Defaults to openapi/openapi.yaml. */
  spec?: OpenApiDocument;
  /** Defaults to src/handlers. */
  handlers?: HandlerRegistry;
  /**
   * Mock mode (`npm run mock`): stubbed operations answer with an example of
   * the contract instead of 501. Throws here when an example does not match its schema.
   */
  mockResponses?: boolean;
  /** How long a key lookup is cached (revocation delay). */
  keyCacheTtlMs?: number;
  /** Plan enforcement settings; defaults to DEFAULT_RATE_LIMITS. */
  rateLimits?: Partial<RateLimitSettings>;
  /** Where rate-limit counts live; in memory by default. */
  rateLimitStores?: RateLimitStores;
  /** Where temporary bans live; in memory (and the database) by default. */
  banList?: BanList;
  /** Cross-instance "key changed" signal (revocation, plan change), so caches drop it at once. */
  keyChanges?: KeyChanges;
  /** Extra readiness checks for /readyz besides the database (e.g. redis). */
  readinessChecks?: Record<string, () => Promise<void>>;
  /** Express `trust proxy`, so the client IP comes from X-Forwarded-For behind a proxy. */
  trustProxy?: boolean | number | string;
}

/**
 * Builds the HTTP application. The middleware order is deliberate:
 *
 * 1. the request id (X-Request-Id on every response, `req.log`), then one
 *    listener per request for the duration histogram and the access log;
 *    helmet: security headers on everything (no X-Powered-By), computed once;
 * 2. under the base path (/v1), first because it carries the traffic: deprecation headers of deprecated operations
 *    (so even their errors carry them); authentication (who is calling);
 *    rate limits (per key, or per IP without a valid key), which set the
 *    X-RateLimit-* headers on every later response, errors included; the 414
 *    for a request target over 8 KiB; then the
 *    401 for a missing or invalid key (before anything reveals the contract);
 *    the JSON body parser (1 MB, else 413; strict about text; bodies of refused requests are
 *    never parsed); the contract validator (400/404/405/415); the handlers;
 * 3. public routes outside the base path: /healthz, /readyz, /metrics, spec and docs;
 * 4. unknown routes (404), then the error mapper, which turns every failure
 *    into an Error object.
 *
 * @example
 * const app = createApp({ storage: await openStorage('sqlite::memory:'), logger, validateResponses: true });
 */
export function createApp(dependencies: AppDependencies): Express {
  const { logger } = dependencies;
  const spec = dependencies.spec ?? loadSpec();
  const basePath = basePathOf(spec);
  const metrics = dependencies.metrics ?? createMetrics();
  const operationOf = operationResolver(spec, basePath);
  const storage = timedStorage(dependencies.storage, (operation) => {
    const child = metrics.dbQueryDuration.labels({ operation, backend: dependencies.storage.backend });
    return (seconds) => child.observe(seconds);
  });
  const { poolStats } = storage;
  if (poolStats) metrics.watchPool(storage.backend, poolStats);

  const app = express();
  app.disable('x-powered-by');
  // API responses are small and personal: a per-response hash (ETag) costs
  // CPU on every request and no client revalidates them.
  app.set('etag', false);
  app.set('trust proxy', dependencies.trustProxy ?? false);
  attachRequestLogger(app, logger);
  app.use(requestIds());
  // The access log is skipped entirely when info is off (LOG_LEVEL=warn).
  const accessLog = dependencies.logRequests && logger.isLevelEnabled('info') ? logger : undefined;
  app.use(observeRequests({ metrics, operationOf, accessLog }));
  app.use(precomputeHeaders(helmet()));

  const api = Router();
  mountDeprecationHeaders(api, spec, basePath);
  mountAnonymousAccess(api, spec);
  api.use(
    authenticate(storage.apiKeys, dependencies.keyCacheTtlMs, dependencies.keyChanges, (result) =>
      metrics.keyCacheLookups.inc({ result }),
    ),
  );
  api.use(
    rateLimits(
      { ...DEFAULT_RATE_LIMITS, ...dependencies.rateLimits },
      dependencies.rateLimitStores ?? memoryStores(),
      dependencies.banList ?? new MemoryBanList(storage.apiKeys),
      logger,
      {
        refused: (plan, window) => metrics.rateLimitRefusals.inc({ plan, window }),
        banned: (plan, window) => metrics.rateLimitBans.inc({ plan, window }),
      },
    ),
  );
  // After the rate limits, so a 414 carries their headers and counts against the caller.
  api.use(limitUrlLength());
  api.use(requireCaller);
  api.use(jsonBody());
  api.use(contractValidator(spec, basePath, { validateResponses: dependencies.validateResponses }));
  const handlers = dependencies.handlers ?? defaultHandlers;
  mountOperations(api, handlers, storage.pets, {
    validateResponses: dependencies.validateResponses,
    ...(dependencies.mockResponses ? { mocks: buildOperationMocks(spec, stubbedOperations(handlers)) } : {}),
  });
  // The API first: it is where the traffic is.
  app.use(basePath, api);

  app.use(limitUrlLength());
  // Liveness: the process answers. Readiness: its dependencies answer too.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readinessRoute({ database: () => storage.ping(), ...dependencies.readinessChecks }, logger));
  // Outside the base path, so never rate limited; absent (404) when disabled.
  const metricsAccess = dependencies.metricsAccess ?? 'open';
  if (metricsAccess !== 'disabled') app.get('/metrics', metricsRoute(metrics, metricsAccess));
  mountDocs(app, spec);

  app.use(unknownRoute);
  app.use(errorMapper(logger, operationOf));
  return app;
}
