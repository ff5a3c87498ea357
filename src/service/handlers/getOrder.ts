import type { Handler } from './types';
import { canSee, orderView } from '../adoption';
import { notFound } from '../errors';

export const getOrder: Handler<'getOrder', 'v2'> = async ({ params }, { orders, caller }) => {
  const order = await orders.get(params.orderId);
  if (!order || !canSee(caller, order)) return { status: 404, body: notFound(`order ${params.orderId} does not exist`) };
  return { status: 200, body: orderView(order), etag: String(order.version) };
};
