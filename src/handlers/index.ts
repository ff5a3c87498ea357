/**
 * One handler (or scaffolded stub) per operation of the contract.
 * `satisfies HandlerRegistry` makes a missing handler, an extra one, or a
 * handler whose responses the contract does not declare a compile error.
 * Rewritten by `npm run scaffold`.
 */
import type { HandlerRegistry } from './types';
import { createPet } from './createPet';
import { getPet } from './getPet';
import { listPets } from './listPets';
import { listStoreOrders } from './listStoreOrders';

export const handlers = {
  createPet,
  getPet,
  listPets,
  listStoreOrders,
} satisfies HandlerRegistry;
