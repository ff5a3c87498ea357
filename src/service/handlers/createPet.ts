import type { Handler } from './types';
import type { Pet } from '../storage';

export const createPet: Handler<'createPet', 'v1' | 'v2'> = async ({ body, headers }, { pets, idempotency, caller }) => {
  const key = headers['Idempotency-Key'];
  if (key === undefined) return { status: 201, body: await pets.create(body) };
  const { replayed, response } = await idempotency.run(
    { owner: caller.principal, key, request: ['createPet', body] },
    async (claim) => ({ status: 201, body: await pets.create(body, { request: claim }) }),
    async (claim) => {
      const pet = await pets.createdBy(claim);
      return pet && { status: 201, body: pet };
    },
  );
  return { status: 201, body: response.body as Pet, ...(replayed && { headers: { 'Idempotent-Replayed': 'true' } }) };
};
