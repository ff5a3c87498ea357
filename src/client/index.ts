/**
 * A typed client of the Pet Adoption API, version 1 (`/v1`), derived from the
 * generated `paths` of openapi/v1/openapi.yaml: paths, parameters, bodies and
 * responses are checked by the compiler. Version 2 has its own client,
 * `pet-adoption-api/client/v2` (src/client/v2.ts).
 *
 * @example
 * const client = createPetAdoptionClient({ baseUrl: 'http://localhost:3000/v1', apiKey });
 * const { data, error } = await client.GET('/pets', { params: { query: { status: 'available', limit: 10 } } });
 */
import type { Client } from 'openapi-fetch';
import type { paths } from '../../generated/v1/openapi';
import { operationTable, securitySchemes } from '../../generated/v1/operations';
import { createVersionClient, type PetAdoptionClientOptions } from './options';

export type { paths, components, operations } from '../../generated/v1/openapi';
export { idempotencyKeys, retryOn429, retryTransient, retryAfterMs, type RetryOptions } from './retry';
export { createVersionClient, type PetAdoptionClientOptions } from './options';
export { declaredMethods } from './methods';
export { readItems } from './items';
export { declaredCredentials, type ContractSecurity, type Credentials } from './credentials';

export type PetAdoptionClient = Client<paths, 'application/json'>;

export function createPetAdoptionClient(options: PetAdoptionClientOptions): PetAdoptionClient {
  return createVersionClient<paths>(options, { operationTable, securitySchemes });
}
