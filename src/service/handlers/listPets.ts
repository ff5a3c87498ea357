import type { Handler } from './types';
import { cursorNotIssued } from '../errors';

export const listPets: Handler<'listPets', 'v1' | 'v2'> = async ({ query }, { pets, pages }) => {
  const { limit, status, cursor } = query;
  const after = cursor === undefined ? 0 : pages.open(cursor, { limit, status });
  if (after === undefined) return { status: 400, body: cursorNotIssued() };
  // One more than asked: whether a next page exists, without counting.
  const found = await pets.list({ limit: limit + 1, status, after });
  if (found.length <= limit) return { status: 200, body: found };
  const page = found.slice(0, limit);
  return { status: 200, body: page, headers: { Link: pages.next('/pets', { after: page[page.length - 1]!.id, limit, status }) } };
};
