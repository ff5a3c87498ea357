/**
 * The service's handler types: the engine's (packages/engine/src/handlers/types.ts),
 * derived entirely from the generated contract types, with the pet adoption
 * service's context and caller. Nothing about an operation's parameters,
 * body or responses is written here by hand.
 *
 * @example
 * export const getPet: Handler<'getPet'> = async ({ params }, { pets }) => {
 *   const pet = await pets.get(params.petId);
 *   return pet ? { status: 200, body: pet } : { status: 404, body: notFound(`pet ${params.petId} does not exist`) };
 * };
 */
import type { Contracts } from '../../../generated/versions';
import type {
  Handler as HandlerOf,
  HandlerRequest as EngineRequest,
  HandlerResponse as EngineResponse,
  OperationId as OperationIdOf,
  HandlerRegistry as RegistryOf,
  Stub,
} from '@spec-first/engine';
import { notImplementedHandler as stubOf } from '@spec-first/engine';
import type { Repositories } from '../storage';
import type { PageLinks } from '../paging';
import type { IdempotentRequests } from '../idempotency';
import type { Caller } from '../keys';

export type Version = keyof Contracts;

/** An operation of any version. */
export type AnyOperationId = { [V in Version]: keyof Contracts[V]['table'] & string }[Version];

/** The operations of version `V`; of several versions, those they all have. */
export type OperationId<V extends Version = 'v1'> = OperationIdOf<Contracts, V>;

/** The services a handler may use besides the repositories, bound to the version that serves the request. */
export interface HandlerServices {
  /** The version's base path (`/v2`): where the URLs of `Location` headers start. */
  basePath: string;
  /** Page cursors and the next page's `Link` header. */
  pages: PageLinks;
  /** Runs a request once per `Idempotency-Key`. */
  idempotency: IdempotentRequests;
}

/** What a handler may use besides the request: the repositories and the services (the engine adds the caller). */
export type HandlerContext = Repositories & HandlerServices;

/** What a handler receives: already validated against the contract (of whichever version `V` served it). */
export type HandlerRequest<K extends OperationId<V>, V extends Version = 'v1'> = EngineRequest<Contracts, K, V>;

/** One of the responses the contract declares for `K` (for several versions: one every one of them declares). */
export type HandlerResponse<K extends OperationId<V>, V extends Version = 'v1'> = EngineResponse<Contracts, K, V>;

/**
 * The handler of operation `K` in version `V` (`v1` by default), or in every
 * version of a union: `Handler<'listPets', 'v1' | 'v2'>` serves both and
 * must type-check against both contracts.
 */
export type Handler<K extends OperationId<V>, V extends Version = 'v1'> = HandlerOf<Contracts, K, V, HandlerContext, Caller>;

/** Exactly one entry per operation of version `V`: a handler, or the stub of that very operation. */
export type HandlerRegistry<V extends Version = 'v1'> = RegistryOf<Contracts, V, HandlerContext, Caller>;

/**
 * The scaffolded placeholder for operation `K` of any version: the server
 * answers it itself (501, or an example under `npm run mock`).
 *
 * @example export const listStoreOrders = notImplementedHandler('listStoreOrders');
 */
export const notImplementedHandler = <K extends AnyOperationId>(operationId: K): Stub<K> => stubOf(operationId);
