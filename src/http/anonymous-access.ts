import type { Router } from 'express';
import { listOperations, type OpenApiDocument } from '../spec/load-spec';
import { requiresApiKey } from '../spec/security';
import { toExpressPath } from './express-path';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set for an operation the contract serves without a key (`security: []`). */
    anonymousAccess?: boolean;
  }
}

/**
 * Marks requests to operations with `security: []` before authentication
 * runs: their Authorization header is not examined, they are never answered
 * 401, and they are rate limited per client IP like every request without a
 * valid key. Must be mounted before `authenticate`.
 */
export function mountAnonymousAccess(router: Router, spec: OpenApiDocument): void {
  for (const op of listOperations(spec)) {
    if (requiresApiKey(spec, op)) continue;
    router[op.method](toExpressPath(op.path), (req, _res, next) => {
      req.anonymousAccess = true;
      next();
    });
  }
}
