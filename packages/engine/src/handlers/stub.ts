/**
 * "Not implemented yet" as a value, not as a response. `npm run scaffold`
 * registers a stub for every new operation; the framework answers it (501
 * `not_implemented` after authentication, limits and request validation, or
 * an example in mock mode), so an operation does not have to declare 501 to
 * be scaffolded, while a real handler still cannot return a status its
 * operation does not declare (`HandlerResponse<K>` is unchanged).
 *
 * @example
 * // a scaffolded handler file
 * export const adoptPet = notImplementedHandler('adoptPet');
 */

const STUB = Symbol('not implemented');

/**
 * The registry entry of an operation that has no handler yet. Only `notImplementedHandler` makes one.
 *
 * @example const later: Stub<'getNote'> = notImplementedHandler('getNote');
 */
export interface Stub<K extends string> {
  readonly [STUB]: true;
  readonly operationId: K;
}

/**
 * The scaffolded placeholder for operation `K`: the server answers it itself.
 *
 * @example export const listStoreOrders = notImplementedHandler('listStoreOrders');
 */
export function notImplementedHandler<K extends string>(operationId: K): Stub<K> {
  return Object.freeze({ [STUB]: true as const, operationId });
}

/** Whether a registry entry is a stub rather than a handler. */
export function isStub(entry: unknown): entry is Stub<string> {
  return typeof entry === 'object' && entry !== null && STUB in entry;
}

/**
 * The operations of a registry that are still stubs.
 *
 * @example stubbedOperations(handlers) // ['listStoreOrders']
 */
export function stubbedOperations(registry: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(registry)
    .filter(([, entry]) => isStub(entry))
    .map(([operationId]) => operationId);
}
