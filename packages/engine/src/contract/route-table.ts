import { listOperations, type OpenApiDocument, type SpecOperation } from './document';

/** One path of the contract with the operations it declares, keyed by upper-case method. */
export interface RoutePath {
  /** The template relative to the base path, e.g. `/pets/{petId}`. */
  readonly template: string;
  readonly operations: ReadonlyMap<string, SpecOperation>;
}

/** What a request matched: the first path that matches, and its operation for the method (if it declares one). */
export interface RouteMatch {
  readonly path: RoutePath;
  readonly operation: SpecOperation | undefined;
  /** The path parameters as they appear in the request path, not decoded: `{ petId: '12' }`. */
  readonly params: Readonly<Record<string, string>>;
}

/**
 * The contract's paths in the order express-openapi-validator tries them, and
 * the one rule every part of the service uses to find a request's operation:
 * the compiled pipelines, the metrics and log names, and the tests' check of
 * responses against the contract. Built once per document.
 */
export interface RouteTable {
  readonly basePath: string;
  /** In matching order. */
  readonly paths: readonly RoutePath[];
  /**
   * The first path (in the validator's order) that matches the raw request
   * path, and its operation for `method`; undefined when no path matches. A
   * path that matches but does not declare the method decides all the same
   * (the validator answers 405), so `GET /pets/mine` never falls through to
   * `/pets/{petId}`.
   */
  match(method: string, rawPath: string): RouteMatch | undefined;
}

/**
 * Builds the route table of a document. Paths match the raw (undecoded)
 * request path the way Express matches routes: case-insensitive, with an
 * optional trailing slash, a parameter being one non-empty segment; so a bad
 * parameter such as `/pets/%FF` still matches and reaches the validator's 400.
 *
 * @example
 * const table = routeTable(spec, '/v1');
 * table.match('GET', '/v1/pets/12')?.operation?.operationId // 'getPet'
 */
export function routeTable(spec: OpenApiDocument, basePath: string): RouteTable {
  const byTemplate = new Map<string, { template: string; operations: Map<string, SpecOperation> }>();
  for (const op of listOperations(spec)) {
    let path = byTemplate.get(op.path);
    if (!path) {
      path = { template: op.path, operations: new Map() };
      byTemplate.set(op.path, path);
    }
    path.operations.set(op.method.toUpperCase(), op);
  }
  const ordered = [...byTemplate.values()]
    .map((path) => ({
      path: Object.freeze(path) as RoutePath,
      pattern: pathPattern(basePath + path.template),
      names: [...path.template.matchAll(/\{([^}]+)\}/g)].map((name) => name[1]!),
      sortKey: validatorSortKey(basePath + path.template),
    }))
    .sort((a, b) => compareLikeValidator(a.sortKey, b.sortKey));
  return Object.freeze({
    basePath,
    paths: Object.freeze(ordered.map(({ path }) => path)),
    match(method: string, rawPath: string): RouteMatch | undefined {
      for (const { path, pattern, names } of ordered) {
        const found = pattern.exec(rawPath);
        if (!found) continue;
        const params: Record<string, string> = {};
        for (const [index, name] of names.entries()) params[name] = found[index + 1]!;
        return { path, operation: path.operations.get(method), params };
      }
      return undefined;
    },
  });
}

/** A contract path as a regular expression over the raw request path. @example pathPattern('/pets/{petId}').test('/PETS/%FF/') // true */
function pathPattern(contractPath: string): RegExp {
  const literal = contractPath.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('([^/]+)')}/?$`, 'i');
}

/**
 * express-openapi-validator's route order (its `sortRoutes`): parameter
 * segments are written `~` (after every letter), a path that extends another
 * comes before it, the rest in string order; static segments thus come before
 * parameters.
 */
const validatorSortKey = (contractPath: string): string => contractPath.replace(/\{[^}]+\}/g, (name) => `:${name.slice(1, -1)}`).replace(/\/:/g, '/~');

function compareLikeValidator(a: string, b: string): number {
  if (a.startsWith(b)) return -1;
  if (b.startsWith(a)) return 1;
  return a > b ? 1 : -1;
}
