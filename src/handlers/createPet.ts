import type { Handler } from '../http/handler';

export const createPet: Handler<'createPet'> = async ({ body }, { pets }) => ({
  status: 201,
  body: await pets.create(body),
});
