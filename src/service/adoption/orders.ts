import type { components } from '../../../generated/v2/openapi';
import type { Caller } from '../keys';
import type { OrderRecord } from '../storage';
import { conflict, staffOnly } from '../errors';

type Order = components['schemas']['Order'];
type Refusal = { status: 403; body: ReturnType<typeof staffOnly> } | { status: 409; body: ReturnType<typeof conflict<'invalid_transition'>> };

/** An order as the API shows it: not whose it is, nor its version (that is its ETag). */
export const orderView = ({ id, petId, status, createdAt, updatedAt }: OrderRecord): Order => ({ id, petId, status, createdAt, updatedAt });

/**
 * Object-level authorization (OWASP API1): staff see every order, a customer
 * only their own; the handlers answer another customer's order exactly as a
 * missing one (404), so ids reveal nothing.
 */
export const canSee = (caller: Caller, order: OrderRecord): boolean => caller.role === 'staff' || order.owner === caller.principal;

/**
 * Why `caller` may not move `order` to `to`, or undefined when they may: only
 * staff complete an order (403, whatever its status), and an order moves
 * once, from `placed` (409).
 */
export function closingRefusal(caller: Caller, order: OrderRecord, to: 'completed' | 'cancelled'): Refusal | undefined {
  if (to === 'completed' && caller.role !== 'staff') return { status: 403, body: staffOnly('only staff may complete an order') };
  if (order.status !== 'placed') {
    return {
      status: 409,
      body: conflict('invalid_transition', `order ${order.id} is ${order.status}: only a placed order can be ${to} (an order moves once)`),
    };
  }
  return undefined;
}
