/**
 * Handler types for any set of contracts, derived entirely from the code
 * `npm run generate` writes (openapi-typescript's `paths`, and each
 * version's operation table): nothing about an operation's parameters,
 * bodies or responses is written by hand. The service instantiates them
 * with its own contracts, context and caller.
 *
 * @example
 * type Handler<K extends OperationId<Contracts, V>, V extends keyof Contracts = 'v1'> = HandlerOf<Contracts, K, V, Context, Caller>;
 */
import type { BinaryBody } from '../response/send-body';
import type { ItemSource } from '../response/sequential';
import type { Stub } from './stub';
import type { Preconditions } from '../conditions/preconditions';

/** An operation as the generated table describes it. */
export interface OperationFacts {
  readonly method: string;
  readonly path: string;
  /** `required`, `optional` (an anonymous requirement beside others) or `none`. */
  readonly authentication: 'required' | 'optional' | 'none';
  /** The query parameters and top-level body properties with a schema `default`: present once validated. */
  readonly defaulted: { readonly query: readonly string[]; readonly body: readonly string[] };
  /** Where openapi-typescript's `paths` types a 3.2 QUERY or additional operation (the code generator's `typedDocument`). */
  readonly typedAs?: { readonly path: string; readonly method: string };
}

/** One major version as generated: openapi-typescript's `paths`, and the operation table. */
export interface GeneratedVersion {
  paths: object;
  table: { readonly [name: string]: OperationFacts };
}

/** Every served version, by name: the `Contracts` type the code generator writes. */
export type ContractSet = { [version: string]: GeneratedVersion };

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void ? I : never;
/** Boxed so that unions stay whole through an intersection. */
type Unbox<B> = B extends { value: infer T } ? T : never;
type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;

type IdsOf<C extends ContractSet, V extends keyof C> = keyof C[V]['table'] & string;

/** An operation of any version. */
export type AnyOperationIdOf<C extends ContractSet> = { [V in keyof C]: IdsOf<C, V> }[keyof C];

/**
 * The operations of version `V`; of several versions, those they all have.
 *
 * @example type Shared = OperationId<Contracts, 'v1' | 'v2'>; // 'getNote' | 'listNotes'
 */
export type OperationId<C extends ContractSet, V extends keyof C> = Unbox<UnionToIntersection<V extends keyof C ? { value: IdsOf<C, V> } : never>> & string;

type Facts<C extends ContractSet, K, V extends keyof C> = K extends keyof C[V]['table'] ? C[V]['table'][K] : never;

/** openapi-typescript's type of the operation (its path item's method; for 3.2's QUERY and additional operations, where `typedAs` says). */
type Operation<C extends ContractSet, K, V extends keyof C> =
  Facts<C, K, V> extends { typedAs: { path: infer P; method: infer M } }
    ? P extends keyof C[V]['paths']
      ? M extends keyof C[V]['paths'][P]
        ? C[V]['paths'][P][M]
        : never
      : never
    : Facts<C, K, V> extends { path: infer P; method: infer M }
      ? P extends keyof C[V]['paths']
        ? M extends keyof C[V]['paths'][P]
          ? C[V]['paths'][P][M]
          : never
        : never
      : never;

/** `T` with the keys `D` made required: the validator has applied their schema defaults. */
type WithDefaults<T, D> = [T] extends [never]
  ? Record<never, never>
  : D extends readonly string[]
    ? T & { [P in Extract<keyof T, D[number]>]-?: Exclude<T[P], undefined> }
    : T;

/** Media types by how the engine reads and writes them (src/contract/media-types.ts). */
type JsonMedia = 'application/json' | `${string}+json` | `${string}/json`;
type FormMedia = 'application/x-www-form-urlencoded' | 'multipart/form-data';
type XmlMedia = 'application/xml' | 'text/xml' | `${string}+xml`;
type TextMedia = `text/${string}`;

/** A request body of media type `M` with schema type `T`, as the handler receives it: for a stream of items, the items as they are read and checked. */
type ReceivedAs<M, T> = M extends RequestStreamMedia
  ? AsyncIterable<ItemOf<T>>
  : M extends JsonMedia | FormMedia
    ? T
    : M extends XmlMedia
      ? never
      : M extends TextMedia
        ? string
        : Blob;
/** Sequential media types (src/response/sequential.ts): a body of items, streamed. */
type SequentialMedia =
  | 'text/event-stream'
  | 'application/jsonl'
  | 'application/x-ndjson'
  | 'application/x-jsonlines'
  | 'application/jsonlines'
  | 'application/json-seq';
/** The sequential media types a request body is read item by item in (src/request/items.ts): all of them. */
type RequestStreamMedia = SequentialMedia;
/** One item of a stream whose schema is `T`: the `items` of an array schema (3.0, 3.1), else `T` itself. */
type ItemOf<T> = T extends readonly (infer I)[] ? I : T;

/** A response body of media type `M` with schema type `T`, as a handler may answer it: for a stream, its items, one at a time. */
type AnsweredAs<M, T> = M extends SequentialMedia
  ? ItemSource<ItemOf<T>>
  : M extends JsonMedia | FormMedia
    ? T
    : M extends XmlMedia
      ? never
      : M extends TextMedia
        ? string
        : BinaryBody;

type ParametersIn<C extends ContractSet, K, V extends keyof C> = Operation<C, K, V> extends { parameters: infer P } ? P : never;
type DefaultedIn<C extends ContractSet, K, V extends keyof C> = Facts<C, K, V> extends { defaulted: infer D } ? D : never;
type In<P, Where extends string> = P extends { [W in Where]?: infer L }
  ? [Exclude<L, undefined>] extends [never]
    ? Record<never, never>
    : Exclude<L, undefined>
  : Record<never, never>;

type BodyIn<C extends ContractSet, K, V extends keyof C> =
  Operation<C, K, V> extends { requestBody?: infer B }
    ? Exclude<B, undefined> extends { content: infer Content }
      ?
          | {
              [M in keyof Content]: {
                mediaType: M;
                body: M extends JsonMedia
                  ? WithDefaults<ReceivedAs<M, Content[M]>, DefaultedIn<C, K, V> extends { body: infer D } ? D : never>
                  : ReceivedAs<M, Content[M]>;
              };
            }[keyof Content]
          | (undefined extends B ? { mediaType: undefined; body: undefined } : never)
      : { mediaType: undefined; body: undefined }
    : { mediaType: undefined; body: undefined };

type ResponsesIn<C extends ContractSet, K, V extends keyof C> = Operation<C, K, V> extends { responses: infer R } ? R : never;

/** The media types of one response, and whether naming it may be left out (JSON, or the only one). */
type Answers<S, Content> = {
  [M in keyof Content]: (M extends JsonMedia ? true : IsUnion<keyof Content> extends true ? false : true) extends true
    ? { status: S; mediaType?: M; body: AnsweredAs<M, Content[M]>; headers?: Record<string, string>; etag?: string }
    : {
        status: S;
        mediaType: M extends `${string}*${string}` ? string : M;
        body: AnsweredAs<M, Content[M]>;
        headers?: Record<string, string>;
        etag?: string;
      };
}[keyof Content];

type HandlerResponseIn<C extends ContractSet, K, V extends keyof C, R = ResponsesIn<C, K, V>> = {
  [S in Extract<Exclude<keyof R, 'default'>, number>]: R[S] extends { content: infer Content }
    ? [keyof Content] extends [never]
      ? { status: S; body?: undefined; headers?: Record<string, string>; etag?: string }
      : Answers<S, Content>
    : { status: S; body?: undefined; headers?: Record<string, string>; etag?: string };
}[Extract<Exclude<keyof R, 'default'>, number>];

/**
 * What a handler receives: already validated against the contract (of whichever version `V` served it).
 *
 * @example type GetNote = HandlerRequest<Contracts, 'getNote', 'v1'>; // { params: { noteId: number }, query: {}, ... }
 */
export type HandlerRequest<C extends ContractSet, K extends string, V extends keyof C> = V extends keyof C
  ? {
      params: In<ParametersIn<C, K, V>, 'path'>;
      query: WithDefaults<In<ParametersIn<C, K, V>, 'query'>, DefaultedIn<C, K, V> extends { query: infer D } ? D : never>;
      headers: In<ParametersIn<C, K, V>, 'header'>;
      cookies: In<ParametersIn<C, K, V>, 'cookie'>;
      /** The media type the client accepts best among those the successful responses declare. */
      accept: string | undefined;
      /** The `Last-Event-ID` a Server-Sent Events client sends when it reconnects: where to resume. */
      lastEventId: string | undefined;
      /** Aborted when the client goes away (a stream's handler stops waiting for its next item). */
      signal: AbortSignal;
      /** The request's `If-Match` / `If-None-Match`: a write's handler checks them against the version it is about to change (412 when they fail). */
      conditions: Preconditions;
    } & BodyIn<C, K, V>
  : never;

/**
 * One of the responses the contract declares for `K`: a status, the media
 * type and the body the contract gives it. For a handler serving several
 * versions, a response every one of them declares (their intersection).
 *
 * @example const answer: HandlerResponse<Contracts, 'getNote', 'v1'> = { status: 404, body: errorBody(404, 'not_found', 'no note 7') };
 */
export type HandlerResponse<C extends ContractSet, K extends string, V extends keyof C> = Unbox<
  UnionToIntersection<V extends keyof C ? { value: HandlerResponseIn<C, K, V> } : never>
>;

/** The caller the handler gets: always with `required` authentication, maybe with `optional`, never with `none`. */
type CallerOf<C extends ContractSet, K, V extends keyof C, Caller> = (V extends keyof C ? Facts<C, K, V> : never) extends { authentication: infer A }
  ? A extends 'required'
    ? Caller
    : A extends 'optional'
      ? Caller | undefined
      : undefined
  : never;

/**
 * The handler of operation `K` in version `V` (or in every version of a
 * union, checked against each), with the user's context and caller.
 *
 * @example
 * type Handler<K extends OperationId<Contracts, 'v1'>> = HandlerOf<Contracts, K, 'v1', { notes: Notes }, Member>;
 * export const getNote: Handler<'getNote'> = async ({ params }, { notes }) => ({ status: 200, body: await notes.get(params.noteId) });
 */
export type HandlerOf<C extends ContractSet, K extends string, V extends keyof C, Context, Caller> = (
  request: HandlerRequest<C, K, V>,
  context: Context & { caller: CallerOf<C, K, V, Caller> },
) => Promise<HandlerResponse<C, K, V>>;

/**
 * Exactly one entry per operation of version `V`: a missing or extra entry
 * is a type error. An entry is a typed handler, or the scaffolded stub of
 * that very operation (answered by the engine: 501, or an example in mock mode).
 *
 * @example export const handlers = { getNote, listNotes: notImplementedHandler('listNotes') } satisfies RegistryOf<Contracts, 'v1', Context, Member>;
 */
export type RegistryOf<C extends ContractSet, V extends keyof C, Context, Caller> = {
  [K in OperationId<C, V>]: HandlerOf<C, K, V, Context, Caller> | Stub<K>;
};

/** A registry of some version, as the server holds it (each was checked against its version where it is declared). */
export type AnyHandlerRegistry = { readonly [operationId: string]: unknown };
