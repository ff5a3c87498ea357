import type { Request, RequestHandler } from 'express';
import type { SpecOperation } from '../contract/document';
import type { RoutePath } from '../contract/route-table';
import type { ServedApi } from '../contract/served-api';
import { deprecationHeaders } from '../contract/deprecation';
import { ApiError, noSuchRoute } from '../errors/api-error';
import { isPerOperation, PHASES, type PerOperation, type PhaseImplementations, type PhaseName } from './phases';
import { runStages, type Stage } from '../stage/stage';
import { contextOf } from '../context/request-context';

const ROUTE = PHASES.indexOf('route');
const EVERY_REQUEST = PHASES.slice(0, ROUTE);
const UNDER_BASE_PATH = PHASES.slice(ROUTE + 1);
/** A request that matched no operation is answered once its caller is known (404 or 405): nothing of the contract is revealed before. */
const UNMATCHED = UNDER_BASE_PATH.slice(0, UNDER_BASE_PATH.indexOf('require-caller') + 1);

/**
 * Assembles the phases (in the order of `PHASES`) into one compiled pipeline
 * per operation of every served version, built at start. Each stage is a
 * plain function call, awaited only when it returns a promise: no router
 * layer, no `next` closure and no path matching per stage. A request is
 * matched once, by the route tables; the operation's facts come first: its
 * name and version (metrics, logs), its deprecation headers. Versions share
 * every phase that is not per operation (the rate limits and their
 * counters), so a caller's quota counts its requests to every version together.
 *
 * A request under a base path that matched no operation is authenticated as
 * the document's own `security` says, counted, and answered 404 (no such
 * path) or 405 with `Allow` (the path exists with other methods). HEAD is not
 * served (405), but a HEAD on a GET operation's path keeps that operation's
 * treatment on its way there: its security (a 405, never a 401, for
 * `security: []`) and its deprecation headers.
 *
 * @example app.use(assemblePipeline(apis, phases));
 */
export function assemblePipeline(apis: readonly ServedApi[], phases: PhaseImplementations): RequestHandler {
  const stagesOf = (names: readonly PhaseName[], op: SpecOperation | undefined, api: ServedApi): Stage[] =>
    names.flatMap((name): Stage[] => {
      if (name === 'route') throw new Error('the route phase is not a stage');
      const stage = isPerOperation(name) ? (phases[name] as PerOperation)(op, api) : (phases[name] as Stage);
      return stage ? [stage] : [];
    });

  const pipelines = new Map<SpecOperation, RequestHandler>();
  const otherMethods = new Map<RoutePath, RequestHandler>();
  const unmatchedPaths = new Map<ServedApi, RequestHandler>();
  for (const api of apis) {
    const deprecated = deprecationHeaders(api.contract, api.basePath);
    const version = api.name;
    const operationFacts = (op: SpecOperation): Stage => {
      const headers = Object.entries(deprecated.get(op.operationId) ?? {}).flat();
      const { operationId } = op;
      return (req) => {
        const context = contextOf(req);
        context.operationName = operationId;
        context.apiVersion = version;
        context.responseHeaders.setAll(headers);
      };
    };
    for (const path of api.table.paths) {
      for (const op of path.operations.values()) pipelines.set(op, runStages([operationFacts(op), ...stagesOf(UNDER_BASE_PATH, op, api)], { respond: true }));
      // A method the path does not declare: 405, once the caller is known. HEAD takes the GET operation's treatment.
      const get = path.operations.get('GET');
      const allowed = [...path.operations.keys()].reverse().join(', ');
      const refuse: Stage = (req) => {
        throw new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed}`, { Allow: allowed });
      };
      const forHead = get ? runStages([operationFacts(get), ...stagesOf(UNMATCHED, get, api), refuse], { respond: true }) : undefined;
      const forOthers = runStages([versionOnly(version), ...stagesOf(UNMATCHED, undefined, api), refuse], { respond: true });
      otherMethods.set(path, (req, res, next) => (req.method === 'HEAD' && forHead ? forHead : forOthers)(req, res, next));
    }
    const notFound: Stage = () => {
      throw noSuchRoute();
    };
    unmatchedPaths.set(api, runStages([versionOnly(version), ...stagesOf(UNMATCHED, undefined, api), notFound], { respond: true }));
  }

  const everyRequest = runStages(
    EVERY_REQUEST.map((name) => phases[name] as Stage),
    { respond: false },
  );
  const route = phases.route;
  const underBasePath = apis.map((api) => ({
    prefix: `${api.basePath.toLowerCase()}/`,
    exact: api.basePath.toLowerCase(),
    pipeline: unmatchedPaths.get(api)!,
  }));
  const toOperation: RequestHandler = (req, res, next) => {
    const match = route(req);
    if (match) {
      contextOf(req).rawPathParams = match.params;
      const pipeline = match.operation ? pipelines.get(match.operation) : otherMethods.get(match.path);
      if (pipeline) return pipeline(req, res, next);
    }
    const path = req.path.toLowerCase();
    const version = underBasePath.find((api) => path.startsWith(api.prefix) || path === api.exact);
    if (version) return version.pipeline(req, res, next);
    next();
  };
  return (req, res, next) => everyRequest(req, res, (error?: unknown) => (error ? next(error) : toOperation(req, res, next)));
}

/** Names the version of a request that matched no operation (metrics, logs). */
const versionOnly =
  (version: string): Stage =>
  (req) => {
    contextOf(req).apiVersion = version;
  };

/**
 * The route phase: the first route table (of the served versions) that
 * matches the request's raw path, by the one matching rule.
 *
 * @example phases.route = routeOf(apis.map((api) => api.table));
 */
export const routeOf =
  (tables: ReadonlyArray<ServedApi['table']>) =>
  (req: Request): ReturnType<ServedApi['table']['match']> => {
    for (const table of tables) {
      const match = table.match(req.method, req.path);
      if (match) return match;
    }
    return undefined;
  };
