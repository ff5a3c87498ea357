import type { Handler } from './types';
import { canSee, compareAndSet, orderView, roleRefusal, stateRefusal } from '../adoption';
import { notFound } from '../errors';

/**
 * Cancels or completes a placed order, if it is still the version `If-Match`
 * names: the order's move and its pet's are one transaction, conditioned on
 * the order's version, so of two changes with the same tag one wins and the
 * other gets 412. Checked in RFC 9110's order: whether the caller may (404,
 * 403), then the precondition (412), then the state (409).
 */
export const updateOrder: Handler<'updateOrder', 'v2'> = async ({ params, body, conditions }, { orders, caller }) =>
  compareAndSet(`order ${params.orderId}`, async () => {
    const order = await orders.get(params.orderId);
    if (!order || !canSee(caller, order)) return { status: 404, body: notFound(`order ${params.orderId} does not exist`) };
    const refused = roleRefusal(caller, body.status);
    if (refused) return refused;
    conditions.check(String(order.version));
    const moved = stateRefusal(order, body.status);
    if (moved) return moved;
    const closed = await orders.close(order.id, body.status, order.version);
    // Undefined: it changed since it was read, and is read and checked again.
    return closed && { status: 200, body: orderView(closed), etag: String(closed.version) };
  });
