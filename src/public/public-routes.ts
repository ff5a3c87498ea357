import type { Express } from 'express';
import type { Logger } from 'pino';
import type { OpenApiDocument } from '../engine/contract';
import type { Metrics } from '../observability/metrics';
import { limitUrlLength } from '../engine/request';
import { asMiddleware, type Stage } from '../engine/stage';
import { mountDocs } from '../engine/publish';
import { metricsRoute, type MetricsAccess } from './metrics-route';
import { readinessRoute } from './readiness';

export interface PublicRoutesOptions {
  /** Every served version: its name (`v1`) and document. */
  apis: ReadonlyArray<{ name: string; basePath: string; contract: OpenApiDocument }>;
  metrics: Metrics;
  metricsAccess: MetricsAccess;
  /** What /readyz checks, by name (the database, Redis). */
  readinessChecks: Record<string, () => Promise<void>>;
  logger: Logger;
  /** The API's rate limit (the same stage, so the same per-address window), applied to the documents and `/docs`. */
  limit?: Stage;
  /** The clock (ms since epoch) that ages readiness results; `Date.now` by default. */
  now?: () => number;
}

/**
 * The endpoints outside the contract's base path, never validated:
 * `/healthz` (the process answers), `/readyz` (its dependencies answer too;
 * one check serves many requests: readiness.ts), `/metrics` (absent when disabled), the
 * contract of each version (`/openapi/v1.json`, ...; `/openapi.json` is v1)
 * and the reference (`/docs`). Only the documents and `/docs` count against
 * the rate limit (every request as one without a key, in its address's
 * window): load balancers and scrapers must never be refused. Long request
 * targets still get their 414 first.
 *
 * @example mountPublicRoutes(app, { apis, metrics, metricsAccess: 'loopback', readinessChecks, logger, limit: phases['rate-limit'] });
 */
export function mountPublicRoutes(app: Express, options: PublicRoutesOptions): void {
  app.use(asMiddleware(limitUrlLength()));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readinessRoute(options.readinessChecks, options.logger, options.now));
  if (options.metricsAccess !== 'disabled') app.get('/metrics', metricsRoute(options.metrics, options.metricsAccess));
  mountDocs(app, options.apis, options.limit && asMiddleware(options.limit));
}
