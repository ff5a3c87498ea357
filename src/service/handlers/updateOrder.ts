import type { Handler } from './types';
import { ApiError } from '@spec-first/engine';
import { canSee, closingRefusal, orderView } from '../adoption';
import { notFound } from '../errors';

/** Tries before giving up on an order that keeps changing under `If-Match: *`. */
const ATTEMPTS = 10;

/**
 * Cancels or completes a placed order, if it is still the version `If-Match`
 * names: the order's move and its pet's are one transaction, conditioned on
 * the order's version, so of two changes with the same tag one wins and the
 * other gets 412. Checked in RFC 9110's order: whether the caller may (404,
 * 403), then the precondition (412), then the state (409).
 */
export const updateOrder: Handler<'updateOrder', 'v2'> = async ({ params, body, conditions }, { orders, caller }) => {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const order = await orders.get(params.orderId);
    if (!order || !canSee(caller, order)) return { status: 404, body: notFound(`order ${params.orderId} does not exist`) };
    const refusal = body.status === 'completed' && caller.role !== 'staff' ? closingRefusal(caller, order, body.status) : undefined;
    if (refusal) return refusal;
    conditions.check(String(order.version));
    const state = closingRefusal(caller, order, body.status);
    if (state) return state;
    const closed = await orders.close(order.id, body.status, order.version);
    if (closed) return { status: 200, body: orderView(closed), etag: String(closed.version) };
    // It changed since it was read. Checked again, a tag that named the old version is a 412 now.
  }
  throw new ApiError(412, 'precondition_failed', `order ${params.orderId} kept changing: read it again, then retry`);
};
