import type { Request } from 'express';
import type { RouteMatch } from '../contract/route-table';
import type { SpecOperation } from '../contract/document';
import type { ServedApi } from '../contract/served-api';
import type { Stage } from '../stage/stage';

/**
 * The phases of a request, in the one order they run: this list is the only
 * place the order is written (the pipeline is assembled from it, and the docs
 * point here). The first three run for every request; the rest run for
 * requests under a version's base path, compiled once per operation.
 *
 * - `observe`: the request id (`X-Request-Id` on every response, `req.id`),
 *   then the user's `observe` (metrics, access logs); the draw that picks
 *   responses to check against the contract after they are sent
 *   (`responseSampleRate`);
 * - `security-headers`: helmet's headers, computed once at start;
 * - `route`: the route table finds the operation (src/contract/route-table.ts);
 * - `authenticate`: who is calling, by the operation's security
 *   requirements (src/security/authenticate.ts); a refusal is
 *   recorded, not answered yet, so the rate limits count it;
 * - `rate-limit`: per caller, or per IP without one; 429, and the rate-limit
 *   headers on every later response;
 * - `url-length`: 414 for a request target (path and query) that is too long;
 * - `require-caller`: 401 (403 for a missing scope, 503 when credentials
 *   cannot be checked), before anything reveals the contract;
 * - `sunset`: a deprecated operation's call is counted; from its sunset date
 *   on, it answers 410 `gone` instead of running;
 * - `parameters`: path, query, header and cookie parameters deserialized by
 *   their style and coerced by the engine, then checked by
 *   express-openapi-validator (400), before the body is read;
 * - `body`: the body read in its declared media type (415 for another, 413,
 *   400); bodies of refused requests are never read;
 * - `validate`: express-openapi-validator checks the body against its schema (400);
 * - `negotiate`: `Accept` picks among the declared response media types (406);
 * - `preconditions`: the `If-Match` / `If-None-Match` an operation declares,
 *   parsed (400); a write to an operation that declares 428 without either
 *   is refused (src/conditions/preconditions.ts); the handler checks them
 *   against the version it reads (412), and `serialize` answers a read 304;
 * - `stream-admission`: a request that streams (a body of items, or a
 *   streamed answer) takes one of its caller's stream slots and one of the
 *   process's until it closes (429 when none is free), and its items are
 *   weighed in the rate limits;
 * - `handle`: the operation's typed handler (or its stub: 501, or an example
 *   in mock mode);
 * - `serialize`: the handler's response written in its media type.
 *
 * A request under a base path that matched no operation runs from
 * `authenticate` to `require-caller` and is then answered 404, or 405 when
 * its path exists with other methods.
 *
 * Failures at any phase go to the error mapper (src/pipeline/error-response.ts).
 */
/**
 * Each phase, in order, with how it is built: `stage`, one stage for every
 * request; `route`, the route lookup; `per-operation`, a stage compiled for
 * each operation of each served version at start.
 */
const PHASE_KINDS = {
  observe: 'stage',
  'security-headers': 'stage',
  route: 'route',
  authenticate: 'per-operation',
  'rate-limit': 'stage',
  'url-length': 'stage',
  'require-caller': 'stage',
  sunset: 'per-operation',
  parameters: 'per-operation',
  body: 'per-operation',
  validate: 'per-operation',
  negotiate: 'per-operation',
  preconditions: 'per-operation',
  'stream-admission': 'per-operation',
  handle: 'per-operation',
  serialize: 'per-operation',
} as const;

export type PhaseName = keyof typeof PHASE_KINDS;

/** The phases in the one order they run. */
export const PHASES = Object.keys(PHASE_KINDS) as readonly PhaseName[];

/** Whether a phase is compiled per operation (else it is one stage for every request, or the route lookup). */
export const isPerOperation = (name: PhaseName): boolean => PHASE_KINDS[name] === 'per-operation';

/** Finds the operation of a request (undefined: no path of the contract matches). */
export type Route = (req: Request) => RouteMatch | undefined;

/** A phase built for each operation of each served version (`undefined`: a request that matched no operation). */
export type PerOperation = (operation: SpecOperation | undefined, api: ServedApi) => Stage | undefined;

/**
 * What each phase does, by its kind: one stage for every request, the route
 * lookup, or a stage built per operation (`undefined` when the phase has
 * nothing to do for it).
 */
export type PhaseImplementations = {
  [P in PhaseName]: (typeof PHASE_KINDS)[P] extends 'per-operation' ? PerOperation : (typeof PHASE_KINDS)[P] extends 'route' ? Route : Stage;
};
