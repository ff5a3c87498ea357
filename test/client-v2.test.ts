/**
 * The typed client of version 2 (`pet-adoption-api/client/v2`, src/client/v2.ts)
 * against the real app on a real port, every response checked against the
 * contract the server serves for it (openapi/v2/openapi.yaml under /v2).
 * The type-level half: getPet (`GET /pets/{petId}`) is not part of v2, so
 * calling it does not compile (`npm run typecheck` fails on an unused
 * `@ts-expect-error` if it ever does).
 */
import { createPetAdoptionClientV2, readItems, type PetAdoptionClientOptions, type components } from '../src/client/v2';
import { createPetAdoptionClient } from '../src/client';
import { startTestApp, type TestApp } from './support/test-app';
import { checkingFetch, listenOnFreePort, type CheckingFetch, type ListeningServer } from './support/http';

let t: TestApp | undefined;
let server: ListeningServer | undefined;
let origin: string;
/** Checks every response the clients receive (retries included) and keeps the breaches. */
let checking: CheckingFetch;

beforeEach(async () => {
  checking = checkingFetch();
  t = await startTestApp();
  server = await listenOnFreePort(t.app);
  origin = server.url;
});

afterEach(async () => {
  await server?.close();
  await t?.close();
  server = undefined;
  t = undefined;
  expect(checking.breaches.map(String)).toEqual([]);
});

const keyOf = (auth: string): string => auth.slice('Bearer '.length);
const v2Client = (options: Partial<Omit<PetAdoptionClientOptions, 'fetch'>> = {}) =>
  createPetAdoptionClientV2({ baseUrl: `${origin}/v2`, apiKey: keyOf(t!.auth), fetch: checking, ...options });

describe('typed client of v2 (openapi-fetch over generated/v2 paths)', () => {
  it('reads the pet export (JSON Lines) as an async iterator of typed pets', async () => {
    const client = v2Client();
    for (const name of ['Rex', 'Misty', 'Tom']) await client.POST('/pets', { body: { name, categoryId: 1 } });
    const { response } = await client.GET('/pets/export', { parseAs: 'stream' });
    expect(response.status).toBe(200);
    const names: string[] = [];
    for await (const pet of readItems<components['schemas']['Pet']>(response)) names.push(pet.name);
    expect(names).toEqual(['Rex', 'Misty', 'Tom']);
  });

  it('creates and lists pets under /v2', async () => {
    const client = v2Client();
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 2 } });
    expect(created.response.status).toBe(201);
    expect(created.response.url).toBe(`${origin}/v2/pets`);
    expect(created.data).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 2, status: 'available' });
    const listed = await client.GET('/pets', { params: { query: { status: 'available', limit: 5 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data).toEqual([created.data]);
  });

  it('sees the same data as v1 (one store, two versions of the contract)', async () => {
    const v1 = createPetAdoptionClient({ baseUrl: `${origin}/v1`, apiKey: keyOf(t!.auth), fetch: checking });
    const created = await v1.POST('/pets', { body: { name: 'Tom', categoryId: 1, status: 'pending' } });
    expect(created.response.status).toBe(201);
    const listed = await v2Client().GET('/pets', { params: { query: { status: 'pending' } } });
    expect(listed.data).toEqual([created.data]);
  });

  it('sends a fresh Idempotency-Key on every create, as the v1 client does (the shared middleware)', async () => {
    const keys: Array<string | null> = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST') keys.push(request.headers.get('Idempotency-Key'));
      return checking(request);
    };
    const client = createPetAdoptionClientV2({ baseUrl: `${origin}/v2`, apiKey: keyOf(t!.auth), fetch: recording });
    for (const name of ['A', 'B']) expect((await client.POST('/pets', { body: { name, categoryId: 1 } })).response.status).toBe(201);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
  });

  it('GET /pets/{petId} (getPet, back in 2.3 for conditional writes) answers the pet with its version as the ETag', async () => {
    const client = v2Client();
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 2 } });
    const read = await client.GET('/pets/{petId}', { params: { path: { petId: created.data!.id } } });
    expect(read.response.status).toBe(200);
    expect(read.data).toEqual(created.data);
    expect(read.response.headers.get('etag')).toBe('"1"');
  });

  it('without a key: 401 as the v2 contract declares it', async () => {
    const listed = await v2Client({ apiKey: 'not-a-key' }).GET('/pets');
    expect(listed.response.status).toBe(401);
    expect(listed.error).toMatchObject({ status: 401 });
  });
});
