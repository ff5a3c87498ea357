import type { Request, RequestHandler, Response } from 'express';
import { listOperations, type OpenApiDocument, type SpecOperation } from '../contract/load-spec';
import { requiresApiKey } from '../contract/security';
import { deprecationHeaders } from '../contract/deprecation';
import { pathPattern } from '../contract/route-table';
import { runStages, type Stage } from './stage';
import { NO_BYPASS, replayKey, type LayerBypass } from './layer-bypass';

export interface OperationStages {
  /** The request validator of this operation (400/415), given the operation. */
  validate: (op: SpecOperation) => Stage[];
  /** The handler (or stub) of this operation, which writes the response. */
  answer: (op: SpecOperation) => Stage;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set for an operation the contract serves without a key (`security: []`). */
    anonymousAccess?: boolean;
  }
}

/**
 * One compiled pipeline per operation of the contract, built at start, and
 * one middleware that picks the pipeline of a request:
 *
 * 1. the operation's facts: its name (metrics, logs), whether it is served
 *    without a key (`security: []`), its deprecation headers;
 * 2. `checks`, the stages every request under the base path goes through, the
 *    unmatched ones too (src/compose.ts: authentication, rate limits, 414, 401,
 *    JSON body);
 * 3. the operation's own validator (400/415);
 * 4. the handler, which writes the response.
 *
 * Each stage is a plain function call, awaited only when it returns a promise:
 * no router layer, no `next` closure and no path matching per stage. A request
 * is matched once, against the contract's paths in the order the validator
 * uses (static segments before parameters, so `/pets/mine` beats
 * `/pets/{petId}`): the first path that matches decides, and when it does not
 * declare the request's method (or nothing matches) the request goes on to
 * `next()`, where the general chain answers 401, 404 or 405 as before.
 * Matching is on the raw path, as Express matches (case-insensitive, optional
 * trailing slash), so a bad parameter (`/pets/%FF`) still reaches the
 * validator's 400, with the rate-limit headers set.
 *
 * @example app.use(compileOperations(spec, '/v1', checks, { validate, answer }));
 */
export function compileOperations(
  spec: OpenApiDocument,
  basePath: string,
  checks: readonly Stage[],
  perOperation: OperationStages,
  bypass: LayerBypass = NO_BYPASS,
): RequestHandler {
  const deprecated = deprecationHeaders(spec, basePath);
  const paths = new Map<string, { pattern: RegExp; sortKey: string; methods: Map<string, RequestHandler>; headFacts?: Stage }>();
  for (const op of listOperations(spec)) {
    const anonymous = !requiresApiKey(spec, op);
    const headers = Object.entries(deprecated.get(op.operationId) ?? {});
    const { operationId } = op;
    /** What the operation's path and method decide before any check: no key for `security: []`, the deprecation headers. */
    const treatment: Stage = (req, res) => {
      req.anonymousAccess = anonymous;
      for (const [name, value] of headers) res.setHeader(name, value);
    };
    const facts: Stage = (req, res) => {
      req.operationName = operationId;
      treatment(req, res);
    };
    const stages = [facts, ...checks, ...perOperation.validate(op), perOperation.answer(op)];
    let entry = paths.get(op.path);
    if (!entry) {
      entry = { pattern: pathPattern(basePath + op.path), sortKey: validatorSortKey(basePath + op.path), methods: new Map() };
      paths.set(op.path, entry);
    }
    entry.methods.set(op.method.toUpperCase(), runStages(stages, { respond: true }));
    // HEAD is not served (the validator answers 405), but a HEAD on a GET
    // operation's path keeps that operation's treatment on its way there: no
    // key for `security: []` (so a 405, never a 401), and its deprecation headers.
    if (op.method === 'get') entry.headFacts = treatment;
  }
  const ordered = [...paths.values()].sort((a, b) => compareLikeValidator(a.sortKey, b.sortKey));

  /** The pipeline of the request's operation; undefined (after HEAD's facts) when there is none. */
  const find = (req: Request, res: Response): RequestHandler | undefined => {
    const path = req.path;
    for (const { pattern, methods, headFacts } of ordered) {
      if (!pattern.test(path)) continue;
      const pipeline = methods.get(req.method);
      if (!pipeline && req.method === 'HEAD') headFacts?.(req, res);
      return pipeline;
    }
    return undefined;
  };
  if (bypass.has('routing')) {
    // The stand-in: each URL's first match replayed, without matching.
    const found = new Map<string, RequestHandler | undefined>();
    return (req, res, next) => {
      const key = replayKey(req);
      if (!found.has(key)) found.set(key, find(req, res));
      const pipeline = found.get(key);
      if (pipeline) pipeline(req, res, next);
      else next();
    };
  }
  return (req, res, next) => {
    const pipeline = find(req, res);
    if (pipeline) pipeline(req, res, next);
    else next();
  };
}

/**
 * express-openapi-validator's route order (its `sortRoutes`), so both pick the
 * same path: parameter segments are written `~` (after every letter), a path
 * that extends another comes before it, the rest in string order; static
 * segments thus come before parameters.
 */
const validatorSortKey = (contractPath: string): string => contractPath.replace(/\{[^}]+\}/g, (name) => `:${name.slice(1, -1)}`).replace(/\/:/g, '/~');

function compareLikeValidator(a: string, b: string): number {
  if (a.startsWith(b)) return -1;
  if (b.startsWith(a)) return 1;
  return a > b ? 1 : -1;
}
