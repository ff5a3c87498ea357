/**
 * The handler types, derived entirely from the generated contract types
 * (`npm run generate` writes generated/): nothing about an operation's
 * parameters, body or responses is written by hand.
 *
 * @example
 * export const getThing: Handler<'getThing'> = async ({ params }, { caller }) => ({ status: 200, body: { id: params.id } });
 */
import type {
  Handler as HandlerOf,
  HandlerRegistry as RegistryOf,
  HandlerRequest as RequestOf,
  HandlerResponse as ResponseOf,
  OperationId as OperationIdOf,
  Principal,
  Stub,
} from '@spec-first/engine';
import { notImplementedHandler as stubOf } from '@spec-first/engine';
import type { Contracts } from '../../generated/versions';
import type { HandlerContext } from './context';

export type Version = keyof Contracts;
type FirstVersion = typeof import('../../generated/versions')['VERSIONS'][0];

/** An operation of any version. */
export type AnyOperationId = { [V in Version]: keyof Contracts[V]['table'] & string }[Version];

/** The operations of version `V`. */
export type OperationId<V extends Version = FirstVersion> = OperationIdOf<Contracts, V>;

/** What a handler receives: already validated against the contract. */
export type HandlerRequest<K extends OperationId<V>, V extends Version = FirstVersion> = RequestOf<Contracts, K, V>;

/** One of the responses the contract declares for `K`. */
export type HandlerResponse<K extends OperationId<V>, V extends Version = FirstVersion> = ResponseOf<Contracts, K, V>;

/** The handler of operation `K`: its second argument is the handler context and the caller (undefined for operations without security). */
export type Handler<K extends OperationId<V>, V extends Version = FirstVersion> = HandlerOf<Contracts, K, V, HandlerContext, Principal>;

/** Exactly one entry per operation of version `V`: a handler, or the stub of that very operation. */
export type HandlerRegistry<V extends Version = FirstVersion> = RegistryOf<Contracts, V, HandlerContext, Principal>;

/**
 * The scaffolded placeholder for operation `K`: the server answers it itself (501, or an example under `npm run mock`).
 *
 * @example export const getThing = notImplementedHandler('getThing');
 */
export const notImplementedHandler = <K extends AnyOperationId>(operationId: K): Stub<K> => stubOf(operationId);
