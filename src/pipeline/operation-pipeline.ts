import type { Request, RequestHandler } from 'express';
import type { OpenApiDocument, SpecOperation } from '../contract/load-spec';
import type { RouteTable } from '../contract/route-table';
import { requiresApiKey } from '../contract/security';
import { deprecationHeaders } from '../contract/deprecation';
import { PHASES, type PhaseImplementations, type PhaseName } from './phases';
import { runStages, type Stage } from './stage';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set for an operation the contract serves without a key (`security: []`). */
    anonymousAccess?: boolean;
  }
}

/** The request pipeline, as the composition root mounts it. */
export interface AssembledPipeline {
  /** Every request: the phases before `route`, then the operation's compiled pipeline, or `next()` when none matched. */
  readonly dispatch: RequestHandler;
  /** Mounted under the base path after `dispatch`: a request that matched no operation, to the validator's 404 or 405. */
  readonly unmatched: RequestHandler;
}

const ROUTE = PHASES.indexOf('route');
const EVERY_REQUEST = PHASES.slice(0, ROUTE);
const UNDER_BASE_PATH = PHASES.slice(ROUTE + 1);
/** A request that matched no operation stops at the validator's 404 or 405. */
const UNMATCHED = UNDER_BASE_PATH.slice(0, UNDER_BASE_PATH.indexOf('validate') + 1);

/**
 * Assembles the phases (in the order of `PHASES`) into one compiled pipeline
 * per operation of the contract, built at start. Each stage is a plain
 * function call, awaited only when it returns a promise: no router layer, no
 * `next` closure and no path matching per stage. A request is matched once,
 * by the route table; the operation's facts come first: its name (metrics,
 * logs), whether it is served without a key, its deprecation headers.
 *
 * HEAD is not served (the validator answers 405), but a HEAD on a GET
 * operation's path keeps that operation's treatment on its way there: no key
 * for `security: []` (so a 405, never a 401), and its deprecation headers.
 *
 * @example const { dispatch, unmatched } = assemblePipeline(contract, table, phases);
 */
export function assemblePipeline(contract: OpenApiDocument, table: RouteTable, phases: PhaseImplementations): AssembledPipeline {
  const deprecated = deprecationHeaders(contract, table.basePath);
  const treatmentOf = (op: SpecOperation): Stage => {
    const anonymous = !requiresApiKey(contract, op);
    const headers = Object.entries(deprecated.get(op.operationId) ?? {});
    return (req, res) => {
      req.anonymousAccess = anonymous;
      for (const [name, value] of headers) res.setHeader(name, value);
    };
  };
  const stageOf = (name: PhaseName, op: SpecOperation | undefined): Stage => {
    switch (name) {
      case 'route':
        throw new Error('the route phase is not a stage');
      case 'validate':
        return phases.validate(op);
      case 'handle':
        return phases.handle(op!);
      case 'sunset':
        return op ? phases.sunset(op) : () => undefined;
      default:
        return phases[name];
    }
  };

  const pipelines = new Map<SpecOperation, RequestHandler>();
  const headTreatments = new Map<object, Stage>();
  for (const path of table.paths) {
    for (const op of path.operations.values()) {
      const treatment = treatmentOf(op);
      const { operationId } = op;
      const facts: Stage = (req, res) => {
        req.operationName = operationId;
        treatment(req, res);
      };
      pipelines.set(op, runStages([facts, ...UNDER_BASE_PATH.map((name) => stageOf(name, op))], { respond: true }));
      if (op.method === 'get') headTreatments.set(path, treatment);
    }
  }

  const everyRequest = runStages(
    EVERY_REQUEST.map((name) => stageOf(name, undefined)),
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
    unmatched: runStages(
      UNMATCHED.map((name) => stageOf(name, undefined)),
      { respond: false },
    ),
  };
}

/**
 * The route phase: the route table's match for the request's raw path.
 *
 * @example phases.route = routeOf(table);
 */
export const routeOf =
  (table: RouteTable) =>
  (req: Request): ReturnType<RouteTable['match']> =>
    table.match(req.method, req.path);

