/**
 * The public surface of the engine's `handlers` part. The handler registry
 * types derived from the generated contract, and stubs for operations not
 * implemented yet. Code outside src/engine imports this part from here, never
 * from one of its files (test/layout.test.ts checks it).
 *
 * @example export const handlers = { listPets, getPet: notImplementedHandler('getPet') } satisfies HandlerRegistry;
 */
export { notImplementedHandler, stubbedOperations } from './stub';
export type { Stub } from './stub';
export type { AnyHandlerRegistry, AnyOperationIdOf, HandlerOf, HandlerRequest, HandlerResponse, OperationId, RegistryOf } from './types';
