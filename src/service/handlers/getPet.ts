import type { Handler } from './types';
import { notFound } from '../errors';

// Version 2 declares the pet's ETag (and 304 for If-None-Match), version 1 does not: the engine sends it where declared.
export const getPet: Handler<'getPet', 'v1' | 'v2'> = async ({ params }, { pets }) => {
  const found = await pets.getVersioned(params.petId);
  return found ? { status: 200, body: found.pet, etag: String(found.version) } : { status: 404, body: notFound(`pet ${params.petId} does not exist`) };
};
