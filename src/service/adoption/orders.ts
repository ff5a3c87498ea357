import type { components } from '../../../generated/v2/openapi';
import type { Caller } from '../keys';
import type { OrderRecord } from '../storage';
import { conflict, staffOnly } from '../errors';

type Order = components['schemas']['Order'];

/** An order as the API shows it: not whose it is, nor its version (that is its ETag). */
export const orderView = ({ id, petId, status, createdAt, updatedAt }: OrderRecord): Order => ({ id, petId, status, createdAt, updatedAt });

/**
 * Object-level authorization (OWASP API1): staff see every order, a customer
 * only their own; the handlers answer another customer's order exactly as a
 * missing one (404), so ids reveal nothing.
 */
export const canSee = (caller: Caller, order: OrderRecord): boolean => caller.role === 'staff' || order.owner === caller.principal;

/** Only staff complete an order (403, whatever its status); undefined when the caller may make this move. */
export function roleRefusal(caller: Caller, to: 'completed' | 'cancelled'): { status: 403; body: ReturnType<typeof staffOnly> } | undefined {
  return to === 'completed' && caller.role !== 'staff' ? { status: 403, body: staffOnly('only staff may complete an order') } : undefined;
}

/** An order moves once, from `placed` (409 otherwise); undefined when it can move to `to`. */
export function stateRefusal(
  order: OrderRecord,
  to: 'completed' | 'cancelled',
): { status: 409; body: ReturnType<typeof conflict<'invalid_transition'>> } | undefined {
  if (order.status === 'placed') return undefined;
  return { status: 409, body: conflict('invalid_transition', `order ${order.id} is ${order.status}: only a placed order can be ${to} (an order moves once)`) };
}
