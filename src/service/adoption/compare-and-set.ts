import { ApiError } from '@spec-first/engine';

/** Tries before giving up on a resource that keeps changing under `If-Match: *`. */
const ATTEMPTS = 10;

/**
 * Runs a conditional write until it is decided: `attempt` reads the current
 * version, checks the request's conditions against it (a stale `If-Match` is
 * a 412 there), and writes only if the version is still that one; it gives
 * undefined when someone wrote in between, and is run again, so that the
 * condition is checked against the version that won.
 *
 * @example return compareAndSet(`pet ${id}`, async () => { const current = await pets.getVersioned(id); conditions.check(...); ... });
 */
export async function compareAndSet<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < ATTEMPTS; tries++) {
    const decided = await attempt();
    if (decided !== undefined) return decided;
  }
  throw new ApiError(412, 'precondition_failed', `${what} kept changing: read it again, then retry`);
}
