/**
 * Handler types, derived entirely from the generated contract types: nothing
 * about an operation's parameters, body or responses is written here by hand.
 *
 * @example
 * export const getPet: Handler<'getPet'> = async ({ params }, { pets }) => {
 *   const pet = await pets.get(params.petId);
 *   return pet ? { status: 200, body: pet } : { status: 404, body: notFound(`pet ${params.petId} does not exist`) };
 * };
 */
import type { operations } from '../../../generated/openapi';
import type { OperationId, operationTable } from '../../../generated/operations';
import type { Repositories } from '../../storage/storage';
import type { PageLinks } from '../../paging/page-links';
import type { IdempotentRequests } from '../../idempotency/idempotent-requests';
import type { Caller } from '../../auth/caller';
import type { Stub } from './stub';

export type { OperationId };

type Operation<K extends OperationId> = operations[K];
type Defaulted<K extends OperationId> = (typeof operationTable)[K]['defaulted'];

/** `T` with the keys `D` made required: the validator has applied their schema defaults. */
type WithDefaults<T, D extends readonly string[]> = [T] extends [never]
  ? Record<never, never>
  : T & { [P in Extract<keyof T, D[number]>]-?: Exclude<T[P], undefined> };

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

export type PathParams<K extends OperationId> = Operation<K>['parameters'] extends { path: infer P }
  ? P
  : Record<never, never>;

/** The header parameters the operation declares, by their names in the contract. */
export type HeaderParams<K extends OperationId> = Operation<K>['parameters'] extends { header?: infer H }
  ? Exclude<H, undefined>
  : Record<never, never>;

export type QueryParams<K extends OperationId> = WithDefaults<
  Exclude<Operation<K>['parameters']['query'], undefined>,
  Defaulted<K>['query']
>;

export type RequestBody<K extends OperationId> = Operation<K> extends { requestBody: infer Body }
  ? WithDefaults<JsonContent<Body>, Defaulted<K>['body']>
  : undefined;

type Responses<K extends OperationId> = Operation<K>['responses'];

/** The statuses an operation declares explicitly (`default` is for the error mapper, not handlers). */
export type DeclaredStatus<K extends OperationId> = Extract<Exclude<keyof Responses<K>, 'default'>, number>;

/** One of the responses the contract declares for `K`: a status and the body the spec gives it. */
export type HandlerResponse<K extends OperationId> = {
  [S in DeclaredStatus<K>]: JsonContent<Responses<K>[S]> extends undefined
    ? { status: S; body?: undefined; headers?: Record<string, string> }
    : { status: S; body: JsonContent<Responses<K>[S]>; headers?: Record<string, string> };
}[DeclaredStatus<K>];

/** What a handler receives: already validated against the contract. */
export interface HandlerRequest<K extends OperationId> {
  params: PathParams<K>;
  query: QueryParams<K>;
  headers: HeaderParams<K>;
  body: RequestBody<K>;
}

/** An operation with `security: []` is served without a key: its handler has no caller. */
type CallerOf<K extends OperationId> = (typeof operationTable)[K]['authenticated'] extends false ? undefined : Caller;

/** The services a handler may use besides the repositories, bound to the version that serves the request. */
export interface HandlerServices {
  /** Page cursors and the next page's `Link` header. */
  pages: PageLinks;
  /** Runs a request once per `Idempotency-Key`. */
  idempotency: IdempotentRequests;
}

/** What a handler may use besides the request: the repositories, the services, the caller. */
export type HandlerContext<K extends OperationId = OperationId> = Repositories & HandlerServices & { caller: CallerOf<K> };

export type Handler<K extends OperationId> = (
  request: HandlerRequest<K>,
  context: HandlerContext<K>,
) => Promise<HandlerResponse<K>>;

/**
 * Exactly one entry per operation of the contract: a missing or extra entry is
 * a type error. An entry is a typed handler, or the scaffolded stub of that
 * very operation (answered by the framework: 501, or an example in mock mode).
 */
export type HandlerRegistry = { [K in OperationId]: Handler<K> | Stub<K> };
