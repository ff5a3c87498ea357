/**
 * What every typed client of the API shares, whichever major version it
 * speaks: the options, and the middleware (src/client/retry.ts) every client
 * is built with.
 */
import createClient, { type Client } from 'openapi-fetch';
import { declaredCredentials, type ContractSecurity } from './credentials';
import { declaredMethods } from './methods';
import { idempotencyKeys, retryTransient, type RetryOptions } from './retry';

export interface PetAdoptionClientOptions {
  /** Base address including the version segment, e.g. `https://api.pet-adoption.example/v1` (or `/v2` for the v2 client). */
  baseUrl: string;
  /** An API key: presented as each operation's declared scheme says (bearer, basic, apiKey in a header, the query or a cookie). */
  apiKey?: string;
  /** An OAuth2 / OpenID Connect access token, for operations whose schemes are oauth2 or openIdConnect. */
  accessToken?: string;
  /** Backoff and retry on 429, 503 and network errors; `false` disables it. */
  retry?: RetryOptions | false;
  /** A fresh `Idempotency-Key` on every create (POST) that has none, so retries store it once; `false` disables it. */
  idempotencyKeys?: boolean;
  fetch?: typeof globalThis.fetch;
}

/**
 * An openapi-fetch client over one version's generated `paths`, presenting
 * the credentials as that version's contract declares them (its generated
 * operation table and security schemes), with the shared middleware. A
 * version a designer adds (`openapi/v3`) gets its typed client this way; its
 * OpenAPI 3.2 QUERY and additional operations are called under their typed
 * paths and sent with their own methods (src/client/methods.ts).
 *
 * @example
 * import type { paths } from '../../generated/v3/openapi';
 * import { operationTable, securitySchemes } from '../../generated/v3/operations';
 * const client = createVersionClient<paths>({ baseUrl: 'http://localhost:3000/v3', apiKey }, { operationTable, securitySchemes });
 * const { data } = await client.POST('/books (QUERY)', { body: { author: 'Le Guin' } }); // sent as QUERY /v3/books
 */
export function createVersionClient<Paths extends {}>(options: PetAdoptionClientOptions, security: ContractSecurity): Client<Paths, 'application/json'> {
  const client = createClient<Paths>({ baseUrl: options.baseUrl, ...(options.fetch && { fetch: options.fetch }) });
  // First, so what follows sees the method that is sent (a QUERY gets no Idempotency-Key).
  client.use(declaredMethods(security.operationTable));
  client.use(
    declaredCredentials(security, {
      ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
      ...(options.accessToken !== undefined && { accessToken: options.accessToken }),
    }),
  );
  // The key first, so every retry of a create carries the same one.
  if (options.idempotencyKeys !== false) client.use(idempotencyKeys());
  if (options.retry !== false) client.use(retryTransient(options.retry));
  return client;
}
