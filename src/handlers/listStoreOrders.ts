import type { Handler } from '../http/handler';
import { notImplemented } from '../errors/api-error';

// Scaffolded by `npm run scaffold`: replace with the implementation.
export const listStoreOrders: Handler<'listStoreOrders'> = async () => ({
  status: 501,
  body: notImplemented('listStoreOrders'),
});
