import { createHash } from 'node:crypto';
import { ApiError } from '@spec-first/engine';
import type { ErrorCode } from '../errors';
import type { IdempotencyRepository } from '../storage';

/** A response as a handler returns it (status and JSON body). */
export interface StoredResponse {
  status: number;
  body: unknown;
}

/** What one idempotent request is: who sends it, its key, and what it asks (to tell a retry from another request). */
export interface IdempotentRequest {
  /** The caller's principal (`key:12`, `token:<sub>`): keys of different callers never collide. */
  owner: string;
  /** The client's `Idempotency-Key`. */
  key: string;
  /** The operation and its validated request: the same key with another body is refused. */
  request: unknown;
}

export type Outcome = { replayed: false; response: StoredResponse } | { replayed: true; response: StoredResponse };

/**
 * Runs a request once per `Idempotency-Key` (the IETF draft, as Stripe uses
 * it): the first request claims the key and its response is stored; a
 * retry with the same body gets that response again; the same key with
 * another body is a 422; a retry while the first is still running is a 409.
 */
export interface IdempotentRequests {
  /**
   * `work` gets the claim's id: it must make its one durable write under that
   * id (pets.create's `request`), so that a claim taken over after a crash
   * finds the write instead of making it twice (`recover`).
   */
  run(
    request: IdempotentRequest,
    work: (claim: number) => Promise<StoredResponse>,
    recover: (claim: number) => Promise<StoredResponse | undefined>,
  ): Promise<Outcome>;
}

export interface IdempotencySettings {
  /** How long a key and its response are kept. */
  retentionMs: number;
  /** How long a request holds its claim before a retry may take over (a crashed instance's claim). */
  lockMs: number;
  now: () => number;
}

/**
 * The records live in the database (`idempotency_keys`), so a retry after a
 * restart still replays, and with several instances exactly one request per
 * key does the work whatever instance each retry reaches: the claim is a
 * unique row, a takeover is a compare-and-set on its lock, and the write is
 * tied to the claim by a unique column.
 *
 * @example
 * const outcome = await idempotency.run({ owner: caller.principal, key, request: body },
 *   async (claim) => ({ status: 201, body: await pets.create(body, { request: claim }) }),
 *   async (claim) => { const pet = await pets.createdBy(claim); return pet && { status: 201, body: pet }; });
 */
export function idempotentRequests(records: IdempotencyRepository, settings: IdempotencySettings): IdempotentRequests {
  const inFlight = (): ApiError<ErrorCode> =>
    new ApiError<ErrorCode>(409, 'idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed: retry later');
  const reused = (): ApiError<ErrorCode> =>
    new ApiError<ErrorCode>(422, 'idempotency_key_reused', 'this Idempotency-Key was already used with another request body');

  /** The claim once this request holds it (taken over from a holder that failed, or new); the stored response otherwise. */
  const claim = async ({ owner, key }: IdempotentRequest, requestHash: string): Promise<{ id: number; takenOver: boolean } | StoredResponse> => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = settings.now();
      const lockedUntil = new Date(now + settings.lockMs);
      const inserted = await records.insert({ owner, key, requestHash, lockedUntil, expiresAt: new Date(now + settings.retentionMs) });
      if (inserted !== undefined) return { id: inserted, takenOver: false };
      const record = await records.find(owner, key);
      if (!record) continue; // deleted in between: claim again
      if (record.expiresAt.getTime() <= now) {
        await records.deleteExpired(record.id, new Date(now));
        continue;
      }
      if (record.requestHash !== requestHash) throw reused();
      if (record.response) return record.response;
      if (record.lockedUntil.getTime() > now) throw inFlight();
      // Its holder failed or crashed: take the claim over, unless another retry did first.
      if (await records.relock(record.id, record.lockedUntil, lockedUntil)) return { id: record.id, takenOver: true };
      throw inFlight();
    }
    throw inFlight();
  };

  return {
    async run(request, work, recover) {
      const requestHash = fingerprint(request.request);
      const claimed = await claim(request, requestHash);
      if (!('takenOver' in claimed)) return { replayed: true, response: claimed };
      const { id } = claimed;
      let response: StoredResponse;
      try {
        // A claim taken over may already have its write (the holder crashed before storing the response);
        // a write that failed may have happened all the same (its answer was lost).
        const written = claimed.takenOver ? await recover(id) : undefined;
        response = written ?? (await work(id).catch(async (error: unknown) => (await recover(id)) ?? Promise.reject(error)));
      } catch (error) {
        await records.unlock(id).catch(() => undefined);
        throw error;
      }
      await records.complete(id, response);
      return { replayed: false, response };
    },
  };
}

/** SHA-256 of the request as canonical JSON (object keys sorted), so equal bodies match whatever their key order. */
function fingerprint(value: unknown): string {
  const canonical = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(canonical);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.keys(node)
          .sort()
          .map((key) => [key, canonical((node as Record<string, unknown>)[key])]),
      );
    }
    return node;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}
