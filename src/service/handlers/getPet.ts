import type { Handler } from './types';
import { notFound } from '../errors';

export const getPet: Handler<'getPet'> = async ({ params }, { pets }) => {
  const pet = await pets.get(params.petId);
  return pet ? { status: 200, body: pet } : { status: 404, body: notFound(`pet ${params.petId} does not exist`) };
};
