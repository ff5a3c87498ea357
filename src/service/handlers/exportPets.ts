import type { Handler } from './types';
import type { Pet, PetRepository, PetStatus } from '../storage';

/** Pets read per query: large enough that the database round trips do not dominate, small enough that memory stays flat. */
const EXPORT_PAGE = 1000;

/**
 * Every pet (optionally of one status) as a stream of JSON Lines: the engine
 * writes and flushes each item and waits while the client is slow, so only
 * one page is held at a time, however many pets there are.
 */
export const exportPets: Handler<'exportPets', 'v2'> = async ({ query, signal }, { pets }) => ({
  status: 200,
  body: everyPet(pets, query.status, signal),
});

/** The pets in ascending id order, a page at a time, until the last page or until the client goes away. */
async function* everyPet(pets: PetRepository, status: PetStatus | undefined, signal: AbortSignal): AsyncGenerator<Pet> {
  let after = 0;
  while (!signal.aborted) {
    const page = await pets.list({ limit: EXPORT_PAGE, status, after });
    yield* page;
    if (page.length < EXPORT_PAGE) return;
    after = page[page.length - 1]!.id;
  }
}
