/**
 * A typed client of the Pet Adoption API, derived from the generated `paths`:
 * paths, parameters, bodies and responses are checked by the compiler.
 *
 * @example
 * const client = createPetAdoptionClient({ baseUrl: 'http://localhost:3000/v1', apiKey });
 * const { data, error } = await client.GET('/pets', { params: { query: { status: 'available', limit: 10 } } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/openapi';
import { retryOn429, type RetryOptions } from './retry';

export type { paths, components, operations } from '../../generated/openapi';
export { retryOn429, retryAfterMs, type RetryOptions } from './retry';

export interface PetAdoptionClientOptions {
  /** Base address including the version segment, e.g. `https://api.pet-adoption.example/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Backoff on 429; `false` disables it. */
  retry?: RetryOptions | false;
  fetch?: typeof globalThis.fetch;
}

export type PetAdoptionClient = Client<paths, 'application/json'>;

export function createPetAdoptionClient(options: PetAdoptionClientOptions): PetAdoptionClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch && { fetch: options.fetch }),
  });
  if (options.retry !== false) client.use(retryOn429(options.retry));
  return client;
}
