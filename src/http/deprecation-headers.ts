import type { Router } from 'express';
import type { OpenApiDocument } from '../spec/load-spec';
import { listOperations } from '../spec/load-spec';
import { deprecationHeaders } from '../spec/deprecation';
import { toExpressPath } from './express-path';

/**
 * Adds Deprecation / Sunset / Link headers to every response of a deprecated
 * operation, errors included, so it must run before auth and validation.
 */
export function mountDeprecationHeaders(router: Router, spec: OpenApiDocument, basePath: string): void {
  const headersById = deprecationHeaders(spec, basePath);
  for (const op of listOperations(spec)) {
    const headers = headersById.get(op.operationId);
    if (!headers) continue;
    router[op.method](toExpressPath(op.path), (_req, res, next) => {
      res.set(headers);
      next();
    });
  }
}
