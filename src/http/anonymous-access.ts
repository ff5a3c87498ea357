import type { Router } from 'express';
import { listOperations, type OpenApiDocument } from '../spec/load-spec';
import { requiresApiKey } from '../spec/security';
import { pathPattern } from './path-pattern';

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
  const markers = listOperations(spec).map((op) => ({
    methods: op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()],
    pattern: pathPattern(op.path),
    anonymous: !requiresApiKey(spec, op),
  }));
  // Matched by pattern, not as Express routes: a route would decode the path
  // parameters here, so a bad one (`/pets/%FF`) would fail before the rate
  // limits set their headers. The operation's route reports it later.
  router.use((req, _res, next) => {
    const marker = markers.find(({ methods, pattern }) => methods.includes(req.method) && pattern.test(req.path));
    req.anonymousAccess = marker?.anonymous ?? false;
    next();
  });
}
