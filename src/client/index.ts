/**
 * A typed client of the Pet Adoption API, derived from the generated `paths`:
 * paths, parameters, bodies and responses are checked by the compiler.
 *
 * @example
 * const client = createPetAdoptionClient({ baseUrl: 'http://localhost:3000/v1', apiKey });
 * const { data, error } = await client.GET('/pets', { params: { query: { status: 'available', limit: 10 } } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/v1/openapi';
import { idempotencyKeys, retryTransient, type RetryOptions } from './retry';

export type { paths, components, operations } from '../../generated/v1/openapi';
export { idempotencyKeys, retryOn429, retryTransient, retryAfterMs, type RetryOptions } from './retry';

export interface PetAdoptionClientOptions {
  /** Base address including the version segment, e.g. `https://api.pet-adoption.example/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Backoff and retry on 429, 503 and network errors; `false` disables it. */
  retry?: RetryOptions | false;
  /** A fresh `Idempotency-Key` on every create (POST) that has none, so retries store it once; `false` disables it. */
  idempotencyKeys?: boolean;
  fetch?: typeof globalThis.fetch;
}

export type PetAdoptionClient = Client<paths, 'application/json'>;

export function createPetAdoptionClient(options: PetAdoptionClientOptions): PetAdoptionClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch && { fetch: options.fetch }),
  });
  // The key first, so every retry of a create carries the same one.
  if (options.idempotencyKeys !== false) client.use(idempotencyKeys());
  if (options.retry !== false) client.use(retryTransient(options.retry));
  return client;
}
