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
 *
 * Every operation gets a marker, in document order like the handlers, and the
 * first that matches decides: a concrete path that requires a key
 * (`/pets/mine`) is never made anonymous by a public template (`/pets/{petId}`)
 * unless that template is also the route that would serve it.
 */
export function mountAnonymousAccess(router: Router, spec: OpenApiDocument): void {
  for (const op of listOperations(spec)) {
    const anonymous = !requiresApiKey(spec, op);
    router[op.method](toExpressPath(op.path), (req, _res, next) => {
      req.anonymousAccess ??= anonymous;
      next();
    });
  }
}
