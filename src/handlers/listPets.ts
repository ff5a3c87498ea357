import type { Handler } from './types';

export const listPets: Handler<'listPets'> = async ({ query }, { pets }) => ({
  status: 200,
  body: await pets.list({ limit: query.limit, status: query.status }),
});
