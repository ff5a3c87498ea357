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
import type { Contracts } from '../../../generated/versions';
import type { Repositories } from '../../storage/storage';
import type { PageLinks } from '../../paging/page-links';
import type { IdempotentRequests } from '../../idempotency/idempotent-requests';
import type { Caller } from '../../auth/caller';
import type { Stub } from './stub';

export type Version = keyof Contracts;

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void ? I : never;
/** Of a union of versions, what every one of them has: `Each<V, F>` is the intersection of `F` over `V` (boxed so unions stay whole). */
type Unbox<B> = B extends { value: infer T } ? T : never;

type IdsOf<V extends Version> = keyof Contracts[V]['table'] & string;
/** An operation of any version. */
export type AnyOperationId = { [V in Version]: IdsOf<V> }[Version];

/** The operations of version `V`; of several versions, those they all have. */
export type OperationId<V extends Version = 'v1'> = Unbox<UnionToIntersection<V extends Version ? { value: IdsOf<V> } : never>> & string;

type Operation<K, V extends Version> = K extends keyof Contracts[V]['operations'] ? Contracts[V]['operations'][K] : never;
type Facts<K, V extends Version> = K extends keyof Contracts[V]['table'] ? Contracts[V]['table'][K] : never;

/** `T` with the keys `D` made required: the validator has applied their schema defaults. */
type WithDefaults<T, D> = [T] extends [never]
  ? Record<never, never>
  : D extends readonly string[]
    ? T & { [P in Extract<keyof T, D[number]>]-?: Exclude<T[P], undefined> }
    : T;

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

type ParametersIn<K, V extends Version> = Operation<K, V> extends { parameters: infer P } ? P : never;
type DefaultedIn<K, V extends Version> = Facts<K, V> extends { defaulted: infer D } ? D : never;
type PathParamsIn<K, V extends Version> = ParametersIn<K, V> extends { path: infer P } ? P : Record<never, never>;
type HeaderParamsIn<K, V extends Version> = ParametersIn<K, V> extends { header?: infer H } ? Exclude<H, undefined> : Record<never, never>;
type QueryParamsIn<K, V extends Version> = WithDefaults<
  ParametersIn<K, V> extends { query?: infer Q } ? Exclude<Q, undefined> : never,
  DefaultedIn<K, V> extends { query: infer D } ? D : never
>;
type RequestBodyIn<K, V extends Version> =
  Operation<K, V> extends { requestBody: infer Body } ? WithDefaults<JsonContent<Body>, DefaultedIn<K, V> extends { body: infer D } ? D : never> : undefined;
type ResponsesIn<K, V extends Version> = Operation<K, V> extends { responses: infer R } ? R : never;
type HandlerResponseIn<K, V extends Version, R = ResponsesIn<K, V>> = {
  [S in Extract<Exclude<keyof R, 'default'>, number>]: JsonContent<R[S]> extends undefined
    ? { status: S; body?: undefined; headers?: Record<string, string> }
    : { status: S; body: JsonContent<R[S]>; headers?: Record<string, string> };
}[Extract<Exclude<keyof R, 'default'>, number>];

/** What a handler receives: already validated against the contract (of whichever version `V` served it). */
export type HandlerRequest<K extends OperationId<V>, V extends Version = 'v1'> = V extends Version
  ? { params: PathParamsIn<K, V>; query: QueryParamsIn<K, V>; headers: HeaderParamsIn<K, V>; body: RequestBodyIn<K, V> }
  : never;

/**
 * One of the responses the contract declares for `K`: a status and the body
 * the spec gives it. For a handler serving several versions, a response
 * every one of them declares (their intersection): a handler shared by v1 and
 * v2 compiles only if what it returns is valid in both contracts.
 */
export type HandlerResponse<K extends OperationId<V>, V extends Version = 'v1'> = Unbox<UnionToIntersection<V extends Version ? { value: HandlerResponseIn<K, V> } : never>>;

/** An operation with `security: []` is served without a key: its handler has no caller. */
type CallerOf<K, V extends Version> = (V extends Version ? Facts<K, V> : never) extends { authenticated: true } ? Caller : undefined;

/** The services a handler may use besides the repositories, bound to the version that serves the request. */
export interface HandlerServices {
  /** Page cursors and the next page's `Link` header. */
  pages: PageLinks;
  /** Runs a request once per `Idempotency-Key`. */
  idempotency: IdempotentRequests;
}

/** What a handler may use besides the request: the repositories, the services, the caller. */
export type HandlerContext<K extends string = string, V extends Version = 'v1'> = Repositories & HandlerServices & { caller: CallerOf<K, V> };

/**
 * The handler of operation `K` in version `V` (`v1` by default), or in every
 * version of a union: `Handler<'listPets', 'v1' | 'v2'>` serves both and
 * must type-check against both contracts.
 */
export type Handler<K extends OperationId<V>, V extends Version = 'v1'> = (
  request: HandlerRequest<K, V>,
  context: HandlerContext<K, V>,
) => Promise<HandlerResponse<K, V>>;

/**
 * Exactly one entry per operation of version `V`'s contract: a missing or
 * extra entry is a type error. An entry is a typed handler, or the scaffolded
 * stub of that very operation (answered by the framework: 501, or an example
 * in mock mode).
 */
export type HandlerRegistry<V extends Version = 'v1'> = { [K in OperationId<V>]: Handler<K, V> | Stub<K> };

/** A registry of some version, as the server holds it (each was checked against its version where it is declared). */
export type AnyHandlerRegistry = { readonly [operationId: string]: unknown };
