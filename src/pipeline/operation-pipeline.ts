import type { Request, RequestHandler } from 'express';
import type { OpenApiDocument, SpecOperation } from '../contract/load-spec';
import type { RouteMatch, RouteTable } from '../contract/route-table';
import { requiresApiKey } from '../contract/security';
import { deprecationHeaders } from '../contract/deprecation';
import { PHASES, type PhaseImplementations, type PhaseName } from './phases';
import { runStages, type Stage } from './stage';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set for an operation the contract serves without a key (`security: []`). */
    anonymousAccess?: boolean;
    /** The major version (`v1`) whose operation the request is for. */
    apiVersion?: string;
  }
}

/** One major version of the contract as it is served: its name, document and route table. */
export interface ServedApi {
  /** `v1`, `v2`, ...: the label in metrics and logs. */
  readonly name: string;
  readonly contract: OpenApiDocument;
  readonly table: RouteTable;
}

/** The request pipeline, as the composition root mounts it. */
export interface AssembledPipeline {
  /** Every request: the phases before `route`, then the operation's compiled pipeline, or `next()` when none matched. */
  readonly dispatch: RequestHandler;
  /** Mounted under each version's base path after `dispatch`: a request that matched no operation, to the validator's 404 or 405. */
  readonly unmatched: ReadonlyArray<{ basePath: string; handler: RequestHandler }>;
}

const ROUTE = PHASES.indexOf('route');
const EVERY_REQUEST = PHASES.slice(0, ROUTE);
const UNDER_BASE_PATH = PHASES.slice(ROUTE + 1);
/** A request that matched no operation stops at the validator's 404 or 405. */
const UNMATCHED = UNDER_BASE_PATH.slice(0, UNDER_BASE_PATH.indexOf('validate') + 1);

/**
 * Assembles the phases (in the order of `PHASES`) into one compiled pipeline
 * per operation of every served version, built at start. Each stage is a
 * plain function call, awaited only when it returns a promise: no router
 * layer, no `next` closure and no path matching per stage. A request is
 * matched once, by the route tables; the operation's facts come first: its
 * name and version (metrics, logs), whether it is served without a key, its
 * deprecation headers. Versions share every phase that is not per operation
 * (authentication, the rate limits and their counters, the body parser), so
 * a key's quota counts its requests to every version together.
 *
 * HEAD is not served (the validator answers 405), but a HEAD on a GET
 * operation's path keeps that operation's treatment on its way there: no key
 * for `security: []` (so a 405, never a 401), and its deprecation headers.
 *
 * @example const { dispatch, unmatched } = assemblePipeline(apis, phases);
 */
export function assemblePipeline(apis: readonly ServedApi[], phases: PhaseImplementations): AssembledPipeline {
  const stageOf = (name: PhaseName, op: SpecOperation | undefined, api: ServedApi | undefined): Stage => {
    switch (name) {
      case 'route':
        throw new Error('the route phase is not a stage');
      case 'validate':
        return phases.validate(op, api!);
      case 'handle':
        return phases.handle(op!, api!);
      case 'sunset':
        return op ? phases.sunset(op, api!) : () => undefined;
      default:
        return phases[name];
    }
  };

  const pipelines = new Map<SpecOperation, RequestHandler>();
  const headTreatments = new Map<object, Stage>();
  for (const api of apis) {
    const deprecated = deprecationHeaders(api.contract, api.table.basePath);
    for (const path of api.table.paths) {
      for (const op of path.operations.values()) {
        const anonymous = !requiresApiKey(api.contract, op);
        const headers = Object.entries(deprecated.get(op.operationId) ?? {});
        const treatment: Stage = (req, res) => {
          req.anonymousAccess = anonymous;
          for (const [name, value] of headers) res.setHeader(name, value);
        };
        const { operationId } = op;
        const version = api.name;
        const facts: Stage = (req, res) => {
          req.operationName = operationId;
          req.apiVersion = version;
          treatment(req, res);
        };
        pipelines.set(op, runStages([facts, ...UNDER_BASE_PATH.map((name) => stageOf(name, op, api))], { respond: true }));
        if (op.method === 'get') headTreatments.set(path, treatment);
      }
    }
  }

  const everyRequest = runStages(
    EVERY_REQUEST.map((name) => stageOf(name, undefined, undefined)),
    { respond: false },
  );
  const route = phases.route;
  const toOperation: RequestHandler = (req, res, next) => {
    const match = route(req);
    const pipeline = match?.operation && pipelines.get(match.operation);
    if (pipeline) return pipeline(req, res, next);
    if (match && req.method === 'HEAD') headTreatments.get(match.path)?.(req, res);
    next();
  };
  return {
    dispatch: (req, res, next) => everyRequest(req, res, (error?: unknown) => (error ? next(error) : toOperation(req, res, next))),
    unmatched: apis.map((api) => ({
      basePath: api.table.basePath,
      handler: runStages(
        UNMATCHED.map((name) => stageOf(name, undefined, api)),
        { respond: false },
      ),
    })),
  };
}

/**
 * The route phase: the first route table (of the served versions) that
 * matches the request's raw path, by the one matching rule.
 *
 * @example phases.route = routeOf(apis.map((api) => api.table));
 */
export const routeOf =
  (tables: readonly RouteTable[]) =>
  (req: Request): RouteMatch | undefined => {
    for (const table of tables) {
      const match = table.match(req.method, req.path);
      if (match) return match;
    }
    return undefined;
  };
