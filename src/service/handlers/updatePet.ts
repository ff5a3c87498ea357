import type { Handler } from './types';
import { ApiError } from '@spec-first/engine';
import { conflict, notFound, staffOnly } from '../errors';

/** Tries before giving up on a pet that keeps changing under `If-Match: *`. */
const ATTEMPTS = 10;

/**
 * Staff change a pet if it is still the version their `If-Match` names: the
 * check and the write are one compare-and-set on the pet's version, so of
 * two writers with the same tag one wins and the other gets 412.
 */
export const updatePet: Handler<'updatePet', 'v2'> = async ({ params, body, conditions }, { pets, caller }) => {
  if (caller.role !== 'staff') return { status: 403, body: staffOnly('only staff may change a pet') };
  const missing = { status: 404 as const, body: notFound(`pet ${params.petId} does not exist`) };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
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
    if (result.outcome === 'updated') return { status: 200, body: result.pet.pet, etag: String(result.pet.version) };
    if (result.outcome === 'missing') return missing;
    if (result.outcome === 'has_orders') {
      return {
        status: 409,
        body: conflict('invalid_transition', `pet ${params.petId} has a placed or completed order: its status follows the order (cancel or complete it)`),
      };
    }
    // Stale: it changed since it was read. Checked again, a tag that named the old version is a 412 now.
  }
  throw new ApiError(412, 'precondition_failed', `pet ${params.petId} kept changing: read it again, then retry`);
};
