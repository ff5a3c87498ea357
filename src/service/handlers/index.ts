/**
 * One handler (or scaffolded stub) per operation of each major version of
 * the contract. `satisfies HandlerRegistry<V>` makes a missing handler, an
 * extra one, or a handler whose responses version V does not declare a
 * compile error; a handler listed under several versions is typed for all
 * of them (`Handler<K, 'v1' | 'v2'>`). Rewritten by `npm run scaffold`.
 *
 * @example const registry: HandlerRegistry<'v1'> = { ...handlers, createPet: notImplementedHandler('createPet') };
 */
import { notImplementedHandler, type HandlerRegistry } from './types';
import { createPet } from './createPet';
import { exportPets } from './exportPets';
import { getOrder } from './getOrder';
import { getPet } from './getPet';
import { listPets } from './listPets';
import { listStoreOrders } from './listStoreOrders';
import { placeOrder } from './placeOrder';
import { updateOrder } from './updateOrder';
import { updatePet } from './updatePet';

/** openapi/v1/openapi.yaml */
export const v1 = {
  createPet,
  getPet,
  listPets,
  listStoreOrders: notImplementedHandler('listStoreOrders'),
} satisfies HandlerRegistry<'v1'>;

/** openapi/v2/openapi.yaml */
export const v2 = {
  createPet,
  exportPets,
  getOrder,
  getPet,
  listPets,
  listStoreOrders,
  placeOrder,
  updateOrder,
  updatePet,
} satisfies HandlerRegistry<'v2'>;

/** The registries, by version. */
export const registries = { v1, v2 };

/** The first version's registry (what a single-version test replaces handlers of). */
export const handlers = v1;

// The handler types and contexts, for code outside this folder: this file is the folder's front door.
export { notImplementedHandler, type Handler, type HandlerRegistry, type Version } from './types';
export { handlerContexts } from './context';
