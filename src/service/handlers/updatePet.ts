import type { Handler } from './types';
import { compareAndSet } from '../adoption';
import { conflict, notFound, staffOnly } from '../errors';

/**
 * Staff change a pet if it is still the version their `If-Match` names: the
 * check and the write are one compare-and-set on the pet's version, so of
 * two writers with the same tag one wins and the other gets 412.
 */
export const updatePet: Handler<'updatePet', 'v2'> = async ({ params, body, conditions }, { pets, caller }) => {
  if (caller.role !== 'staff') return { status: 403, body: staffOnly('only staff may change a pet') };
  const missing = { status: 404 as const, body: notFound(`pet ${params.petId} does not exist`) };
  return compareAndSet(`pet ${params.petId}`, async () => {
    const current = await pets.getVersioned(params.petId);
    if (!current) return missing;
    conditions.check(String(current.version));
    // Pending means "one placed order": only an order makes a pet pending.
    if (body.status === 'pending' && current.pet.status !== 'pending') {
      return {
        status: 409,
        body: conflict('invalid_transition', `pet ${params.petId} cannot be set pending: a pet is pending while an order for it is placed`),
      };
    }
    const result = await pets.update(params.petId, body, current.version);
    switch (result.outcome) {
      case 'updated':
        return { status: 200, body: result.pet.pet, etag: String(result.pet.version) };
      case 'missing':
        return missing;
      case 'has_orders':
        return {
          status: 409,
          body: conflict('invalid_transition', `pet ${params.petId} has a placed or completed order: its status follows the order (cancel or complete it)`),
        };
      case 'stale':
        // It changed since it was read: read and checked again.
        return undefined;
    }
  });
};
