import type { Handler } from './types';
import { cursorNotIssued } from '../errors';
import { orderView } from '../adoption';

/** A customer's own orders, or every order for staff, a page at a time (as listPets pages). */
export const listStoreOrders: Handler<'listStoreOrders', 'v2'> = async ({ query }, { orders, pages, caller }) => {
  const { limit, status, cursor } = query;
  const after = cursor === undefined ? 0 : pages.open(cursor, { limit, status });
  if (after === undefined) return { status: 400, body: cursorNotIssued() };
  const owner = caller.role === 'staff' ? undefined : caller.principal;
  // One more than asked: whether a next page exists, without counting.
  const found = await orders.list({ owner, status, limit: limit + 1, after });
  if (found.length <= limit) return { status: 200, body: found.map(orderView) };
  const page = found.slice(0, limit);
  return {
    status: 200,
    body: page.map(orderView),
    headers: { Link: pages.next('/store/orders', { after: page[page.length - 1]!.id, limit, status }) },
  };
};
