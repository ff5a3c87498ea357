import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Storage } from './storage/storage';
import { handlers as defaultHandlers } from './handlers';
import type { HandlerRegistry } from './handlers/types';
import { authenticate, requireCaller } from './auth/authenticate';
import { DEFAULT_RATE_LIMITS, memoryStores, rateLimits, type RateLimitSettings, type RateLimitStores } from './rate-limit/rate-limits';
import { MemoryBanList, type BanList } from './rate-limit/ban-list';
import type { KeyChanges } from './auth/key-changes';
import { readinessRoute } from './public/readiness';
import { contractValidator, operationValidator } from './contract/validator';
import { answerStage } from './pipeline/respond';
import { compileOperations } from './pipeline/operation-pipeline';
import { asMiddleware, runStages, sequence } from './pipeline/stage';
import type { OperationId } from './handlers/types';
import { stubbedOperations } from './handlers/stub';
import { buildOperationMocks } from './mock/mock-responses';
import { mountDocs } from './public/docs';
import { precomputeHeaders } from './pipeline/security-headers';
import { limitUrlLength } from './guards/url-length';
import { jsonBodyStages } from './guards/json-body';
import { errorMapper, unknownRoute } from './errors/error-mapper';
import { basePathOf } from './contract/base-path';
import { loadSpec, type OpenApiDocument } from './contract/load-spec';
import { createMetrics, type Metrics } from './observability/metrics';
import { metricsRoute, type MetricsAccess } from './public/metrics-route';
import { operationResolver } from './observability/operation-names';
import { assignRequestId, attachRequestLogger } from './observability/request-id';
import { requestObserver } from './observability/request-observer';
import { timedStorage } from './storage/timed-storage';
import { NO_BYPASS, replayFirst, type LayerBypass } from './pipeline/layer-bypass';

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
  /** Measurement only (the cost ledger, bench/ledger.ts): layers replaced by stand-ins. */
  bypass?: LayerBypass;
}

/**
 * Builds the HTTP application. The order is deliberate:
 *
 * 1. on every request, in one step: the request id (X-Request-Id on every
 *    response, `req.log`), one listener for the duration histogram and the
 *    access log, helmet's security headers (computed once);
 * 2. the operations of the contract, first because they carry the traffic:
 *    one compiled pipeline per operation (src/pipeline/operation-pipeline.ts:
 *    deprecation headers, authentication, rate limits, 414, 401, JSON body,
 *    the operation's validator, its handler);
 * 3. anything else under the base path: the same checks, then the validator's
 *    404 or 405;
 * 4. public routes outside the base path: /healthz, /readyz, /metrics, spec and docs;
 * 5. unknown routes (404), then the error mapper, which turns every failure
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

  const bypass = dependencies.bypass ?? NO_BYPASS;
  const app = express();
  app.disable('x-powered-by');
  // API responses are small and personal: a per-response hash (ETag) costs
  // CPU on every request and no client revalidates them.
  app.set('etag', false);
  app.set('trust proxy', dependencies.trustProxy ?? false);
  attachRequestLogger(app, logger);
  // The access log is skipped entirely when info is off (LOG_LEVEL=warn).
  const accessLog = dependencies.logRequests && logger.isLevelEnabled('info') ? logger : undefined;
  app.use(
    runStages(
      [
        ...(bypass.has('observability') ? [] : [assignRequestId, requestObserver({ metrics, operationOf, accessLog })]),
        ...(bypass.has('security-headers') ? [] : [precomputeHeaders(helmet())]),
      ],
      { respond: false },
    ),
  );

  const authentication = authenticate(storage.apiKeys, dependencies.keyCacheTtlMs, dependencies.keyChanges, (result) =>
    metrics.keyCacheLookups.inc({ result }),
  );
  const limits = rateLimits(
    { ...DEFAULT_RATE_LIMITS, ...dependencies.rateLimits },
    dependencies.rateLimitStores ?? memoryStores(),
    dependencies.banList ?? new MemoryBanList(storage.apiKeys),
    logger,
    {
      refused: (plan, window) => metrics.rateLimitRefusals.inc({ plan, window }),
      banned: (plan, window) => metrics.rateLimitBans.inc({ plan, window }),
    },
  );
  // Every request under the base path, matched or not, in this order:
  // authentication (who is calling; skipped for `security: []`); rate limits
  // (per key, or per IP without a valid key), whose headers go on every later
  // response; the 414, after the limits so it counts; the 401, before anything
  // reveals the contract; the JSON body (bodies of refused requests are never parsed).
  const checks = [
    bypass.has('authentication')
      ? replayFirst(authentication, (req) => ({ caller: req.caller, authFailure: req.authFailure }), (req, recorded) => Object.assign(req, recorded))
      : authentication,
    ...(bypass.has('rate-limiting') ? [] : [limits]),
    limitUrlLength(),
    requireCaller,
    ...(bypass.has('body-parsing') ? [replayFirst(sequence(jsonBodyStages()), (req) => req.body as unknown, (req, body) => (req.body = body))] : jsonBodyStages()),
  ];
  const handlers = dependencies.handlers ?? defaultHandlers;
  const answerOptions = {
    validateResponses: dependencies.validateResponses,
    bypass,
    ...(dependencies.mockResponses ? { mocks: buildOperationMocks(spec, stubbedOperations(handlers)) } : {}),
  };
  const validatorOptions = { validateResponses: dependencies.validateResponses };
  // The API first: it is where the traffic is. One compiled pipeline per operation.
  app.use(
    compileOperations(
      spec,
      basePath,
      checks,
      {
        validate: (op) => {
          const stages = operationValidator(spec, basePath, op, validatorOptions);
          return bypass.has('validation')
            ? [
                replayFirst(
                  sequence(stages),
                  (req) => ({ openapi: (req as { openapi?: unknown }).openapi, params: req.params, query: req.query, body: req.body as unknown }),
                  (req, recorded) => {
                    Object.assign(req, { openapi: recorded.openapi, params: recorded.params, body: recorded.body });
                    Object.defineProperty(req, 'query', { value: recorded.query, writable: true, configurable: true, enumerable: true });
                  },
                ),
              ]
            : stages;
        },
        answer: (op) => answerStage(op.operationId as OperationId, handlers, storage.pets, answerOptions),
      },
      bypass,
    ),
  );
  // Anything else under the base path: the same checks in the same order, then
  // the validator's 404 or 405 (or 400 for a path it cannot decode).
  const unmatched = Router();
  unmatched.use(runStages(checks, { respond: false }));
  unmatched.use(contractValidator(spec, basePath, validatorOptions));
  app.use(basePath, unmatched);

  app.use(asMiddleware(limitUrlLength()));
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
