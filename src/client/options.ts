/**
 * What every typed client of the API shares, whichever major version it
 * speaks: the options, and the middleware (src/client/retry.ts) every client
 * is built with.
 */
import createClient, { type Client } from 'openapi-fetch';
import { idempotencyKeys, retryTransient, type RetryOptions } from './retry';

export interface PetAdoptionClientOptions {
  /** Base address including the version segment, e.g. `https://api.pet-adoption.example/v1` (or `/v2` for the v2 client). */
  baseUrl: string;
  apiKey: string;
  /** Backoff and retry on 429, 503 and network errors; `false` disables it. */
  retry?: RetryOptions | false;
  /** A fresh `Idempotency-Key` on every create (POST) that has none, so retries store it once; `false` disables it. */
  idempotencyKeys?: boolean;
  fetch?: typeof globalThis.fetch;
}

/**
 * An openapi-fetch client over one version's generated `paths`, with the key
 * and the shared middleware.
 *
 * @example const client = createVersionClient<paths>({ baseUrl: 'http://localhost:3000/v2', apiKey });
 */
export function createVersionClient<Paths extends {}>(options: PetAdoptionClientOptions): Client<Paths, 'application/json'> {
  const client = createClient<Paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch && { fetch: options.fetch }),
  });
  // The key first, so every retry of a create carries the same one.
  if (options.idempotencyKeys !== false) client.use(idempotencyKeys());
  if (options.retry !== false) client.use(retryTransient(options.retry));
  return client;
}
