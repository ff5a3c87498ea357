import type { Request } from 'express';
import type { RouteMatch } from '../contract/route-table';
import type { SpecOperation } from '../contract/load-spec';
import type { Stage } from './stage';
import type { ServedApi } from './operation-pipeline';

/**
 * The phases of a request, in the one order they run: this list is the only
 * place the order is written (the pipeline is assembled from it, and the docs
 * point here). The first three run for every request; the rest run for
 * requests under the contract's base path, compiled once per operation.
 *
 * - `observe`: the request id (`X-Request-Id` on every response, `req.log`),
 *   the duration histogram and the access log, recorded when the response
 *   closes; the draw that picks responses to check against the contract
 *   after they are sent (VALIDATE_RESPONSES as a fraction);
 * - `security-headers`: helmet's headers, computed once at start;
 * - `route`: the route table finds the operation (src/contract/route-table.ts);
 * - `authenticate`: who is calling (skipped for `security: []`); a failure is
 *   recorded, not answered yet, so the rate limits count it;
 * - `rate-limit`: per key, or per IP without a valid key; 429, and the
 *   rate-limit headers on every later response;
 * - `request-size`: 414 for a request target that is too long;
 * - `require-caller`: 401 for a request without a valid key, before anything
 *   reveals the contract;
 * - `sunset`: a deprecated operation's call is counted (by plan); from its
 *   sunset date on, it answers 410 `gone` instead of running;
 * - `body`: the JSON body (413, 400 for bad JSON or text); bodies of refused
 *   requests are never parsed;
 * - `validate`: express-openapi-validator (400, 415; for a request that matched
 *   no operation, its 404 or 405);
 * - `handle`: the operation's typed handler (or its stub: 501, or an example in
 *   mock mode);
 * - `serialize`: the handler's response written as JSON.
 *
 * Failures at any phase go to the error mapper (src/pipeline/error-response.ts).
 */
export const PHASES = [
  'observe',
  'security-headers',
  'route',
  'authenticate',
  'rate-limit',
  'request-size',
  'require-caller',
  'sunset',
  'body',
  'validate',
  'handle',
  'serialize',
] as const;

export type PhaseName = (typeof PHASES)[number];

/** Finds the operation of a request (undefined: no path of the contract matches). */
export type Route = (req: Request) => RouteMatch | undefined;

/**
 * What each phase does. Most phases are one stage for every operation; the
 * `sunset`, `validate` and `handle` phases are built per operation of each
 * served version (`validate` also for requests that matched no operation:
 * `undefined`).
 */
export interface PhaseImplementations {
  observe: Stage;
  'security-headers': Stage;
  route: Route;
  authenticate: Stage;
  'rate-limit': Stage;
  'request-size': Stage;
  'require-caller': Stage;
  sunset: (operation: SpecOperation, api: ServedApi) => Stage;
  body: Stage;
  validate: (operation: SpecOperation | undefined, api: ServedApi) => Stage;
  handle: (operation: SpecOperation, api: ServedApi) => Stage;
  serialize: Stage;
}

/**
 * Replaces named phases with something built from the real ones. This is the
 * benchmarks' seam (bench/ measures what a phase costs by running the service
 * with that phase replaced): only code that builds its own service through
 * `compose` can pass hooks; no configuration or environment variable reaches it.
 *
 * @example const hooks: PhaseHooks = { 'security-headers': () => () => undefined };
 */
export type PhaseHooks = { readonly [P in PhaseName]?: (real: PhaseImplementations[P]) => PhaseImplementations[P] };

/** The implementations with the hooks applied. */
export function withHooks(phases: PhaseImplementations, hooks: PhaseHooks = {}): PhaseImplementations {
  const result = { ...phases } as Record<PhaseName, unknown>;
  for (const name of PHASES) {
    const hook = hooks[name] as ((real: unknown) => unknown) | undefined;
    if (hook) result[name] = hook(phases[name]);
  }
  return result as unknown as PhaseImplementations;
}
