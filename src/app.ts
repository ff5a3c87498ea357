import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
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
import { mountOperations } from './http/routes';
import { mountDocs } from './http/docs';
import { precomputeHeaders } from './http/static-headers';
import { limitUrlLength } from './http/url-length';
import { jsonBody } from './http/json-body';
import { errorMapper, unknownRoute } from './errors/error-mapper';
import { basePathOf } from './spec/base-path';
import { loadSpec, type OpenApiDocument } from './spec/load-spec';

export interface AppDependencies {
  storage: Storage;
  logger: Logger;
  /** Validate every handler response against the contract (a mismatch becomes a 500 and a log line). */
  validateResponses: boolean;
  /** Log one line per request (at info level). */
  logRequests?: boolean;
  /** Defaults to openapi/openapi.yaml. */
  spec?: OpenApiDocument;
  /** Defaults to src/handlers. */
  handlers?: HandlerRegistry;
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
 * 1. helmet: security headers on everything (no X-Powered-By), computed once;
 *    request logging when the level is info or lower;
 * 2. under the base path (/v1), first because it carries the traffic: deprecation headers of deprecated operations
 *    (so even their errors carry them); authentication (who is calling);
 *    rate limits (per key, or per IP without a valid key), which set the
 *    X-RateLimit-* headers on every later response, errors included; the 414
 *    for a request target over 8 KiB; then the
 *    401 for a missing or invalid key (before anything reveals the contract);
 *    the JSON body parser (1 MB, else 413; strict about text; bodies of refused requests are
 *    never parsed); the contract validator (400/404/405/415); the handlers;
 * 3. public routes outside the base path: /healthz, /readyz, spec and docs;
 * 4. unknown routes (404), then the error mapper, which turns every failure
 *    into an Error object.
 *
 * @example
 * const app = createApp({ storage: await openStorage('sqlite::memory:'), logger, validateResponses: true });
 */
export function createApp(dependencies: AppDependencies): Express {
  const { storage, logger } = dependencies;
  const spec = dependencies.spec ?? loadSpec();
  const basePath = basePathOf(spec);

  const app = express();
  app.disable('x-powered-by');
  // API responses are small and personal: a per-response hash (ETag) costs
  // CPU on every request and no client revalidates them.
  app.set('etag', false);
  app.set('trust proxy', dependencies.trustProxy ?? false);
  app.use(precomputeHeaders(helmet()));
  // One line per request at info level; skipped entirely when info is off.
  if (dependencies.logRequests && logger.isLevelEnabled('info')) {
    app.use(
      pinoHttp({
        logger,
        quietReqLogger: true,
        serializers: {
          req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      }),
    );
  }

  const api = Router();
  mountDeprecationHeaders(api, spec, basePath);
  api.use(authenticate(storage.apiKeys, dependencies.keyCacheTtlMs, dependencies.keyChanges));
  api.use(
    rateLimits(
      { ...DEFAULT_RATE_LIMITS, ...dependencies.rateLimits },
      dependencies.rateLimitStores ?? memoryStores(),
      dependencies.banList ?? new MemoryBanList(storage.apiKeys),
      logger,
    ),
  );
  // After the rate limits, so a 414 carries their headers and counts against the caller.
  api.use(limitUrlLength());
  api.use(requireCaller);
  api.use(jsonBody());
  api.use(contractValidator(spec, basePath, { validateResponses: dependencies.validateResponses }));
  mountOperations(api, dependencies.handlers ?? defaultHandlers, storage.pets, {
    validateResponses: dependencies.validateResponses,
  });
  // The API first: it is where the traffic is.
  app.use(basePath, api);

  app.use(limitUrlLength());
  // Liveness: the process answers. Readiness: its dependencies answer too.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readinessRoute({ database: () => storage.ping(), ...dependencies.readinessChecks }, logger));
  mountDocs(app, spec);

  app.use(unknownRoute);
  app.use(errorMapper(logger));
  return app;
}
