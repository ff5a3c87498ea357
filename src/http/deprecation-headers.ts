import type { Router } from 'express';
import type { OpenApiDocument } from '../spec/load-spec';
import { listOperations } from '../spec/load-spec';
import { deprecationHeaders } from '../spec/deprecation';
import { pathPattern } from './path-pattern';

/**
 * Adds Deprecation / Sunset / Link headers to every response of a deprecated
 * operation, errors included, so it must run before auth and validation.
 */
export function mountDeprecationHeaders(router: Router, spec: OpenApiDocument, basePath: string): void {
  const headersById = deprecationHeaders(spec, basePath);
  for (const op of listOperations(spec)) {
    const headers = headersById.get(op.operationId);
    if (!headers) continue;
    // Matched by pattern, not as an Express route: a route would decode the
    // path parameters here, so a bad one (`/pets/%FF`) would fail before the
    // rate limits set their headers. The operation's route reports it later.
    const methods = op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()];
    const pattern = pathPattern(op.path);
    router.use((req, res, next) => {
      if (methods.includes(req.method) && pattern.test(req.path)) res.set(headers);
      next();
    });
  }
}
