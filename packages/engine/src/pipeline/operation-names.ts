import type { Request } from 'express';
import type { RouteTable } from '../contract/route-table';
import { contextOf } from '../context/request-context';

/** Routes outside the contract get fixed names; anything else is `unmatched`. Never a raw URL. */
const PUBLIC_ROUTES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/healthz\/?$/i, 'healthz'],
  [/^\/docs(\/|$)/i, 'docs'],
];

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export const UNMATCHED = 'unmatched';

/** Requests outside every version's base path (public routes, unknown paths). */
export const NO_VERSION = 'none';

/**
 * Names the operation a request is for, from the route tables of the served
 * versions (the one matching rule of the service): the operationId when the
 * first matching path declares the request's method (whatever happened to
 * the request: refused with 401 or 429 before the validator ran, or invalid),
 * a fixed name for the public routes (a user's route by its path), else `unmatched` (an undeclared method,
 * such as `GET` on a path that declares only `POST`, is unmatched even if a
 * later template would match). It also sets `contextOf(req).apiVersion`: the version
 * whose base path the request is under, else `none`. Cached on the request;
 * the compiled pipelines set both at once.
 *
 * @example
 * const operationOf = operationResolver([{ name: 'v1', table: routeTable(spec) }], ['/readyz']);
 * operationOf(req) // 'getPet' for GET /v1/pets/12 (its context's apiVersion: 'v1')
 */
export function operationResolver(apis: ReadonlyArray<{ name: string; table: RouteTable }>, routes: readonly string[] = []): (req: Request) => string {
  const bases = apis.map(({ name, table }) => ({ name, prefix: new RegExp(`^${escaped(table.basePath)}(/|$)`, 'i') }));
  // The user's own routes are named by their path: `/readyz` is `readyz`.
  // The published documents: /openapi.json and /openapi/<name>.json (or .yaml) of a served document only.
  const spec = new RegExp(`^/openapi(/(${apis.map(({ name }) => escaped(name)).join('|')}))?\\.(yaml|json)$`, 'i');
  const named = [
    ...PUBLIC_ROUTES,
    [spec, 'spec'] as const,
    ...routes.map((route) => [new RegExp(`^${escaped(route)}/?$`, 'i'), route.replace(/^\//, '')] as const),
  ];
  const resolve = (req: Request, method: string, path: string): string => {
    contextOf(req).apiVersion ??= bases.find((base) => base.prefix.test(path))?.name ?? NO_VERSION;
    for (const { table } of apis) {
      const operation = table.match(method, path)?.operation;
      if (operation) return operation.operationId;
    }
    for (const [pattern, name] of named) if (pattern.test(path)) return name;
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
