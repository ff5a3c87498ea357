import { notImplementedHandler } from './types';

// Not implemented yet: the server answers 501 not_implemented (an example under `npm run mock`).
export const listStoreOrders = notImplementedHandler('listStoreOrders');
