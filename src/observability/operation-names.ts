import type { Request } from 'express';
import { type RouteTable, HTTP_METHODS } from '../engine/contract';
import { contextOf } from '../engine/context';

/** Routes outside the contract get fixed names; anything else is `unmatched`. Never a raw URL. */
const PUBLIC_ROUTES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/healthz\/?$/i, 'healthz'],
  [/^\/readyz\/?$/i, 'readyz'],
  [/^\/metrics\/?$/i, 'metrics'],
  [/^\/openapi(\/v\d+)?\.(yaml|json)$/i, 'spec'],
  [/^\/docs(\/|$)/i, 'docs'],
];

export const UNMATCHED = 'unmatched';

/** HTTP methods reported as themselves; any other is `other`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(HTTP_METHODS.map((method) => method.toUpperCase()));

/** A method label from a fixed set. @example methodLabel('PROPFIND') // 'other' */
export const methodLabel = (method: string): string => (KNOWN_METHODS.has(method) ? method : 'other');

/** Requests outside every version's base path (public routes, unknown paths). */
export const NO_VERSION = 'none';

/**
 * Names the operation a request is for, from the route tables of the served
 * versions (the one matching rule of the service): the operationId when the
 * first matching path declares the request's method (whatever happened to
 * the request: refused with 401 or 429 before the validator ran, or invalid),
 * a fixed name for the public routes, else `unmatched` (an undeclared method,
 * such as `GET` on a path that declares only `POST`, is unmatched even if a
 * later template would match). It also sets `contextOf(req).apiVersion`: the version
 * whose base path the request is under, else `none`. Cached on the request;
 * the compiled pipelines set both at once.
 *
 * @example
 * const operationOf = operationResolver([{ name: 'v1', table: routeTable(spec) }]);
 * operationOf(req) // 'getPet' for GET /v1/pets/12 (its context's apiVersion: 'v1')
 */
export function operationResolver(apis: ReadonlyArray<{ name: string; table: RouteTable }>): (req: Request) => string {
  const bases = apis.map(({ name, table }) => ({ name, prefix: new RegExp(`^${table.basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/|$)`, 'i') }));
  const resolve = (req: Request, method: string, path: string): string => {
    contextOf(req).apiVersion ??= bases.find((base) => base.prefix.test(path))?.name ?? NO_VERSION;
    for (const { table } of apis) {
      const operation = table.match(method, path)?.operation;
      if (operation) return operation.operationId;
    }
    for (const [pattern, name] of PUBLIC_ROUTES) if (pattern.test(path)) return name;
    return UNMATCHED;
  };

  return (req) => {
    const context = contextOf(req);
    if (context.operationName === undefined) {
      const url = req.originalUrl;
      const query = url.indexOf('?');
      context.operationName = resolve(req, req.method, query === -1 ? url : url.slice(0, query));
    }
    return context.operationName;
  };
}
