import { startTestApp, type TestApp } from './support/test-app';
import { rawRows } from './support/raw-rows';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

const createPet = (body: object) => t.api.post('/v1/pets').set('Authorization', t.auth).send(body);
const listPets = (query = '') => t.api.get(`/v1/pets${query}`).set('Authorization', t.auth);
/** The pet's row as the database holds it, read past the app's storage layer. */
const storedRow = async (id: number): Promise<Record<string, unknown> | undefined> => {
  const row = (await rawRows(t.databaseUrl, 'pets')).find((candidate) => Number(candidate['id']) === id);
  // PostgreSQL's driver gives a bigint as a string.
  return row && { ...row, category_id: Number(row['category_id']) };
};

describe('createPet (POST /v1/pets)', () => {
  it('201: stores the pet and returns it with its new id', async () => {
    const res = await createPet({ name: 'Rex', categoryId: 3, status: 'pending' }).expect(201);
    expect(res.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 3, status: 'pending' });
    expect(await storedRow(res.body.id)).toMatchObject({ name: 'Rex', category_id: 3, status: 'pending' });
    expect((await t.api.get(`/v1/pets/${res.body.id}`).set('Authorization', t.auth).expect(200)).body).toEqual(res.body);
  });

  it('a status omitted at creation is stored as available', async () => {
    const res = await createPet({ name: 'Tom', categoryId: 1 }).expect(201);
    expect(res.body.status).toBe('available');
    expect((await storedRow(res.body.id))?.['status']).toBe('available');
  });

  it('assigns unique, increasing ids', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createPet({ name: `p${i}`, categoryId: 1 }).expect(201)).body.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(5);
  });

  it('accepts a name of exactly 200 characters', async () => {
    await createPet({ name: 'x'.repeat(200), categoryId: 1 }).expect(201);
  });

  // Found by `npm run contract`: a NUL was a 500 on PostgreSQL (text cannot hold it) and an
  // unpaired surrogate was stored as U+FFFD on both backends; the contract now refuses both
  // (`pattern` on name), and the JSON body parser refuses them in every body string first.
  it.each([
    ['a NUL character', 'a\u0000b', 'body must not contain the NUL character (\\u0000)'],
    ['an unpaired UTF-16 surrogate', 'a\uD800b', 'body must not contain unpaired UTF-16 surrogates'],
  ])('400 for a name with %s (it could not be stored as sent)', async (_what, name, message) => {
    const res = await createPet({ name, categoryId: 1 }).expect(400);
    expect(res.body.message).toBe(message);
  });

  it('stores and returns other awkward characters exactly (control characters, separators, astral)', async () => {
    const name = '"\\\'<>&\u0001\u001f\u2028é\u{1F43E}';
    const res = await createPet({ name, categoryId: 1 }).expect(201);
    expect(res.body.name).toBe(name);
    expect((await t.storage.pets.get(res.body.id))?.name).toBe(name);
  });

  it.each([
    ['name missing', { categoryId: 1 }, 'body.name is required'],
    ['categoryId missing', { name: 'Rex' }, 'body.categoryId is required'],
    ['categoryId as a string (never coerced)', { name: 'Rex', categoryId: '3' }, 'body.categoryId must be integer'],
    ['categoryId not an integer', { name: 'Rex', categoryId: 1.5 }, 'body.categoryId must be integer'],
    ['categoryId zero', { name: 'Rex', categoryId: 0 }, 'body.categoryId must be >= 1'],
    ['categoryId above 2^53-1', { name: 'Rex', categoryId: 2 ** 53 }, 'body.categoryId must be <= 9007199254740991'],
    ['name empty', { name: '', categoryId: 1 }, 'body.name must NOT have fewer than 1 characters'],
    ['name of 201 characters', { name: 'x'.repeat(201), categoryId: 1 }, 'body.name must NOT have more than 200 characters'],
    ['name not a string', { name: 42, categoryId: 1 }, 'body.name must be string'],
    [
      'status not in the enum',
      { name: 'Rex', categoryId: 1, status: 'adopted' },
      'body.status must be equal to one of the allowed values: available, pending, sold',
    ],
    ['a client-sent id', { id: 7, name: 'Rex', categoryId: 1 }, 'body.id is not allowed (unknown property)'],
    ['an unknown field', { name: 'Rex', categoryId: 1, colour: 'black' }, 'body.colour is not allowed (unknown property)'],
  ])('400 when %s, naming the field and rule; nothing is stored', async (_case, body, message) => {
    const res = await createPet(body).expect(400);
    expect(res.body).toEqual({ code: 'invalid_request', status: 400, message });
    expect(await rawRows(t.databaseUrl, 'pets')).toEqual([]);
  });

  it('400 for 2^63 written as a JSON number (int64 that JavaScript cannot hold exactly)', async () => {
    const res = await t.api
      .post('/v1/pets')
      .set('Authorization', t.auth)
      .set('Content-Type', 'application/json')
      .send('{"name":"Rex","categoryId":9223372036854775808}')
      .expect(400);
    expect(res.body.message).toContain('body.categoryId');
  });

  it('400 when the body is not an object', async () => {
    const res = await t.api
      .post('/v1/pets')
      .set('Authorization', t.auth)
      .send([{ name: 'Rex', categoryId: 1 }])
      .expect(400);
    expect(res.body.message).toBe('body must be object');
  });

  it('400 when there is no body at all', async () => {
    const res = await t.api.post('/v1/pets').set('Authorization', t.auth).expect(400);
    expect(res.body.message).toMatch(/body is required/);
  });
});

describe('listPets (GET /v1/pets)', () => {
  // Seeded through the repository: the API's own create is covered above and is rate limited.
  async function seed(count: number, status: 'available' | 'pending' | 'sold' = 'available') {
    const created = [];
    for (let i = 0; i < count; i++) created.push(await t.storage.pets.create({ name: `pet${i}`, categoryId: 1 + (i % 3), status }));
    return created;
  }

  it('200 with an empty array when there are no pets', async () => {
    expect((await listPets().expect(200)).body).toEqual([]);
  });

  it('returns at most 20 pets by default, in ascending id order', async () => {
    const created = await seed(25);
    const { body } = await listPets().expect(200);
    // The first 20 created, in the order they were created (ascending ids), each as it was stored.
    expect(body).toEqual(created.slice(0, 20).map(({ id }, i) => ({ id, name: `pet${i}`, categoryId: 1 + (i % 3), status: 'available' })));
    expect(body.map((pet: { id: number }) => pet.id)).toEqual(
      created
        .slice(0, 20)
        .map(({ id }) => id)
        .sort((a, b) => a - b),
    );
  });

  it('limit is the maximum number returned (1 and 100 are the bounds)', async () => {
    await seed(101);
    expect((await listPets('?limit=1').expect(200)).body).toHaveLength(1);
    expect((await listPets('?limit=7').expect(200)).body).toHaveLength(7);
    expect((await listPets('?limit=100').expect(200)).body).toHaveLength(100);
  });

  it('the order is stable: the same query gives the same page', async () => {
    await seed(10);
    const first = (await listPets('?limit=5').expect(200)).body;
    const second = (await listPets('?limit=5').expect(200)).body;
    expect(second).toEqual(first);
  });

  it.each([
    ['0', 'query.limit must be >= 1'],
    ['101', 'query.limit must be <= 100'],
    ['abc', 'query.limit must be integer'],
    ['1.5', 'query.limit must be integer'],
    ['-1', 'query.limit must be >= 1'],
    ['', 'query.limit must be integer'],
    // JavaScript would read these as integers; the contract's integers are decimal digits.
    ['1e1', 'query.limit must be an integer written in decimal digits'],
    ['0x14', 'query.limit must be an integer written in decimal digits'],
    ['%2020', 'query.limit must be an integer written in decimal digits'],
    ['20.0', 'query.limit must be an integer written in decimal digits'],
  ])('400 for limit=%s', async (limit, message) => {
    const res = await listPets(`?limit=${limit}`).expect(400);
    expect(res.body).toEqual({ code: 'invalid_request', status: 400, message });
  });

  it('status filter returns only pets with that status', async () => {
    await seed(3, 'available');
    await seed(2, 'sold');
    await seed(1, 'pending');
    for (const [status, count] of [
      ['available', 3],
      ['sold', 2],
      ['pending', 1],
    ] as const) {
      const { body } = await listPets(`?status=${status}`).expect(200);
      expect(body).toHaveLength(count);
      expect(body.every((pet: { status: string }) => pet.status === status)).toBe(true);
    }
    expect((await listPets('?status=sold&limit=1').expect(200)).body).toHaveLength(1);
  });

  it('400 for a status outside the enum', async () => {
    const res = await listPets('?status=adopted').expect(400);
    expect(res.body.message).toBe('query.status must be equal to one of the allowed values: available, pending, sold');
  });

  it('400 for an unknown query parameter', async () => {
    const res = await listPets('?offset=10').expect(400);
    expect(res.body.message).toBe('query.offset is not a known query parameter');
  });
});

describe('getPet (GET /v1/pets/{petId}, deprecated)', () => {
  const SUNSET = { deprecation: '@1795219200', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT', link: '</v1/pets>; rel="successor-version"' };

  it('200 with the pet, and deprecation headers', async () => {
    const created = (await createPet({ name: 'Rex', categoryId: 2 }).expect(201)).body;
    const res = await t.api.get(`/v1/pets/${created.id}`).set('Authorization', t.auth).expect(200);
    expect(res.body).toEqual(created);
    expect(res.headers).toMatchObject(SUNSET);
  });

  it('404 when the pet does not exist, with deprecation headers', async () => {
    const res = await t.api.get('/v1/pets/999').set('Authorization', t.auth).expect(404);
    expect(res.body).toEqual({ code: 'not_found', status: 404, message: 'pet 999 does not exist' });
    expect(res.headers).toMatchObject(SUNSET);
  });

  it('the largest safe id is valid (404, not 400)', async () => {
    await t.api
      .get(`/v1/pets/${2 ** 53 - 1}`)
      .set('Authorization', t.auth)
      .expect(404);
  });

  it.each([
    ['0', 'params.petId must be >= 1'],
    ['-3', 'params.petId must be >= 1'],
    ['abc', 'params.petId must be integer'],
    ['1.5', 'params.petId must be integer'],
    ['9007199254740992', 'params.petId must be <= 9007199254740991'],
    ['9223372036854775808', 'params.petId must be <= 9007199254740991'],
    ['100000000000000000000', 'params.petId must be <= 9007199254740991'],
    // Read as numbers by JavaScript (1e999 as Infinity, which no maximum stops): refused before the database sees them.
    ['1e999', 'params.petId must be an integer written in decimal digits'],
    ['396197e47872', 'params.petId must be an integer written in decimal digits'],
    ['1e3', 'params.petId must be an integer written in decimal digits'],
    ['0x10', 'params.petId must be an integer written in decimal digits'],
    ['%205', 'params.petId must be an integer written in decimal digits'],
    ['1.0', 'params.petId must be an integer written in decimal digits'],
  ])('400 for petId=%s, with deprecation headers', async (petId, message) => {
    const res = await t.api.get(`/v1/pets/${petId}`).set('Authorization', t.auth).expect(400);
    expect(res.body).toEqual({ code: 'invalid_request', status: 400, message });
    expect(res.headers).toMatchObject(SUNSET);
  });

  it('401 responses carry the deprecation headers too', async () => {
    const res = await t.api.get('/v1/pets/1').expect(401);
    expect(res.headers).toMatchObject(SUNSET);
  });

  it('other operations carry no deprecation headers', async () => {
    const res = await listPets().expect(200);
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.headers.sunset).toBeUndefined();
  });
});

describe('listStoreOrders (GET /v1/store/orders)', () => {
  it('is declared but not implemented: 501 not_implemented', async () => {
    const res = await t.api.get('/v1/store/orders').set('Authorization', t.auth).expect(501);
    expect(res.body).toEqual({ code: 'not_implemented', status: 501, message: expect.stringContaining('listStoreOrders') });
  });

  it('requires authentication like every operation', async () => {
    await t.api.get('/v1/store/orders').expect(401);
  });
});
