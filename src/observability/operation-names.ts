import type { Request } from 'express';
import { listOperations, type OpenApiDocument } from '../contract/load-spec';

/** Routes outside the contract get fixed names; anything else is `unmatched`. Never a raw URL. */
const PUBLIC_ROUTES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/healthz\/?$/i, 'healthz'],
  [/^\/readyz\/?$/i, 'readyz'],
  [/^\/metrics\/?$/i, 'metrics'],
  [/^\/openapi\.(yaml|json)$/i, 'spec'],
  [/^\/docs(\/|$)/i, 'docs'],
];

export const UNMATCHED = 'unmatched';

/** HTTP methods reported as themselves; any other is `other`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A method label from a fixed set. @example methodLabel('PROPFIND') // 'other' */
export const methodLabel = (method: string): string => (KNOWN_METHODS.has(method) ? method : 'other');

/**
 * Names the operation a request is for, from the contract: the operationId
 * when the method and path match one it declares (whatever happened to the request: refused
 * with 401 or 429 before the validator ran, or invalid), a fixed name for the
 * public routes, else `unmatched`. Path templates are compiled once into
 * regexes that follow Express's matching (case-insensitive, optional trailing
 * slash); a request costs a few regex tests. The answer is cached on the request.
 *
 * @example
 * const operationOf = operationResolver(spec, '/v1');
 * operationOf(req) // 'getPet' for GET /v1/pets/12
 */
export function operationResolver(spec: OpenApiDocument, basePath: string): (req: Request) => string {
  const operations = listOperations(spec).map((op) => ({
    operationId: op.operationId,
    method: op.method.toUpperCase(),
    // A path parameter is one non-empty segment.
    pattern: new RegExp(`^${escapeRegExp(basePath + op.path).replace(/\\\{[^}]+\\\}/g, '[^/]+')}/?$`, 'i'),
  }));

  const resolve = (method: string, path: string): string => {
    for (const op of operations) {
      // Only declared methods: a HEAD or DELETE the contract does not declare is refused (405), unmatched.
      if (op.method === method && op.pattern.test(path)) return op.operationId;
    }
    for (const [pattern, name] of PUBLIC_ROUTES) if (pattern.test(path)) return name;
    return UNMATCHED;
  };

  return (req) => {
    if (req.operationName === undefined) {
      const url = req.originalUrl;
      const query = url.indexOf('?');
      req.operationName = resolve(req.method, query === -1 ? url : url.slice(0, query));
    }
    return req.operationName;
  };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

declare module 'express-serve-static-core' {
  interface Request {
    /** The operationId (or fixed route name) of the request, once resolved. */
    operationName?: string;
  }
}
