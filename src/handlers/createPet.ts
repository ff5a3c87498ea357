import type { Handler } from './types';

export const createPet: Handler<'createPet'> = async ({ body }, { pets }) => ({
  status: 201,
  body: await pets.create(body),
});
