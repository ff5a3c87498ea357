/**
 * A typed client of the Pet Adoption API, version 2 (`/v2`), derived from the
 * generated `paths` of openapi/v2/openapi.yaml: version 1.1 without getPet
 * (`GET /pets/{petId}` does not compile here). The same options and
 * middleware as the v1 client (retry on 429/503/network errors, a fresh
 * `Idempotency-Key` on every create).
 *
 * @example
 * import { createPetAdoptionClientV2 } from 'pet-adoption-api/client/v2';
 * const client = createPetAdoptionClientV2({ baseUrl: 'http://localhost:3000/v2', apiKey });
 * const { data, error } = await client.GET('/pets', { params: { query: { status: 'available', limit: 10 } } });
 */
import type { Client } from 'openapi-fetch';
import type { paths } from '../../generated/v2/openapi';
import { operationTable, securitySchemes } from '../../generated/v2/operations';
import { createVersionClient, type PetAdoptionClientOptions } from './options';

export type { paths, components, operations } from '../../generated/v2/openapi';
export { idempotencyKeys, retryTransient, retryAfterMs, type RetryOptions } from './retry';
export type { PetAdoptionClientOptions } from './options';
export { readItems } from './items';
export { declaredCredentials, type ContractSecurity, type Credentials } from './credentials';

export type PetAdoptionClientV2 = Client<paths, 'application/json'>;

export function createPetAdoptionClientV2(options: PetAdoptionClientOptions): PetAdoptionClientV2 {
  return createVersionClient<paths>(options, { operationTable, securitySchemes });
}
