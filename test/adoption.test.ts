/**
 * Adoption (version 2.3): orders that move a pet from available to pending
 * to sold, customers and staff, conditional requests and problem details, on
 * a real database (every backend), with every response checked against the
 * contract by the test client. The invariant of adoption-invariant.ts is
 * checked after the races.
 */
import { appOn, startTestApp, type TestApp } from './support/test-app';
import type { Storage } from '../src/service/storage';
import { rawExecute } from './support/raw-rows';

let t: TestApp;
/** Keys with room for the races below (the free plan's 60 a minute would refuse them). */
const ROOMY = { requestsPerMinute: 100_000, requestsPerDay: 10_000_000 };
let customer: string;
let other: string;
let staff: string;

beforeAll(async () => {
  t = await startTestApp();
  customer = await t.issueKey('enterprise', ROOMY);
  other = await t.issueKey('enterprise', ROOMY);
  staff = await t.issueKey('enterprise', { ...ROOMY, role: 'staff' });
});
afterAll(async () => {
  expect(await t.storage.adoptionViolations()).toEqual([]);
  await t.close();
});

const newPet = async (body: object = { name: 'Rex', categoryId: 1 }): Promise<number> =>
  (await t.api.post('/v2/pets').set('Authorization', staff).send(body).expect(201)).body.id;
const place = (auth: string, petId: number) => t.api.post('/v2/store/orders').set('Authorization', auth).send({ petId });
const petOf = async (id: number) => (await t.api.get(`/v2/pets/${id}`).set('Authorization', staff).expect(200)).body.status;
const order = (auth: string, id: number, headers: Record<string, string> = {}) => t.api.get(`/v2/store/orders/${id}`).set({ Authorization: auth, ...headers });
const patchOrder = (auth: string, id: number, status: string, headers: Record<string, string> = {}) =>
  t.api
    .patch(`/v2/store/orders/${id}`)
    .set({ Authorization: auth, ...headers })
    .send({ status });
const patchPet = (auth: string, id: number, body: object, headers: Record<string, string> = {}) =>
  t.api
    .patch(`/v2/pets/${id}`)
    .set({ Authorization: auth, 'Content-Type': 'application/merge-patch+json', ...headers })
    .send(JSON.stringify(body));
const error = (code: string, status: number) => ({ code, status, message: expect.any(String) });

describe('placeOrder', () => {
  it('places an order for an available pet: 201 Order with Location and ETag; the pet is pending', async () => {
    const petId = await newPet();
    const res = await place(customer, petId).expect(201);
    expect(res.body).toEqual({ id: expect.any(Number), petId, status: 'placed', createdAt: expect.any(String), updatedAt: res.body.createdAt });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(res.headers.location).toBe(`/v2/store/orders/${res.body.id}`);
    expect(res.headers.etag).toBe('"1"');
    expect(await petOf(petId)).toBe('pending');
    expect((await order(customer, res.body.id).expect(200)).body).toEqual(res.body);
  });

  it('404 for no such pet, 409 pet_not_available for a pet that is not available, 400 for a body out of the contract; nothing changes', async () => {
    expect((await place(customer, 999_999).expect(404)).body).toEqual(error('not_found', 404));
    const sold = await newPet({ name: 'Old', categoryId: 1, status: 'sold' });
    expect((await place(customer, sold).expect(409)).body).toEqual(error('pet_not_available', 409));
    const petId = await newPet();
    await place(customer, petId).expect(201);
    expect((await place(other, petId).expect(409)).body).toEqual(error('pet_not_available', 409));
    for (const body of [{}, { petId: 0 }, { petId: 'x' }, { petId, extra: 1 }]) {
      const res = await t.api.post('/v2/store/orders').set('Authorization', customer).send(body);
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
    }
    expect(await petOf(sold)).toBe('sold');
    expect(
      (await t.api.get('/v2/store/orders?status=placed&limit=100').set('Authorization', staff).expect(200)).body.filter(
        (o: { petId: number }) => o.petId === petId,
      ),
    ).toHaveLength(1);
  });

  it('honours Idempotency-Key: a retry answers the same order again, and places nothing more', async () => {
    const petId = await newPet();
    const first = await place(customer, petId).set('Idempotency-Key', 'adopt-1').expect(201);
    const again = await place(customer, petId).set('Idempotency-Key', 'adopt-1').expect(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(
      (
        await place(customer, petId + 1)
          .set('Idempotency-Key', 'adopt-1')
          .expect(422)
      ).body.code,
    ).toBe('idempotency_key_reused');
  });

  it('a retry that took over a claim its first attempt had already placed under answers that order, not 409', async () => {
    // The first attempt's transaction commits while the retry, holding the claim, places: the retry finds the pet pending.
    const firstAttemptCommitsMeanwhile: Storage = {
      ...t.storage,
      orders: {
        ...t.storage.orders,
        place: async (petId, owner, options) => {
          await t.storage.orders.place(petId, owner, options);
          return t.storage.orders.place(petId, owner, options);
        },
      },
    };
    const racing = await appOn(firstAttemptCommitsMeanwhile);
    try {
      const petId = await newPet();
      const res = await racing.api.post('/v2/store/orders').set({ Authorization: customer, 'Idempotency-Key': 'taken-over' }).send({ petId }).expect(201);
      expect(res.body).toMatchObject({ petId, status: 'placed' });
      expect((await place(customer, petId).set('Idempotency-Key', 'taken-over').expect(201)).body).toEqual(res.body);
    } finally {
      await racing.close();
    }
  });

  it('fifty customers ordering one pet at once, through two instances: exactly one 201 and 49 × 409', async () => {
    const second = await startTestApp({ databaseUrl: t.databaseUrl });
    try {
      const keys = await Promise.all(Array.from({ length: 50 }, () => t.issueKey('enterprise', ROOMY)));
      const petId = await newPet();
      const answers = await Promise.all(
        keys.map((key, index) => (index % 2 === 0 ? t.api : second.api).post('/v2/store/orders').set('Authorization', key).send({ petId })),
      );
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([201, ...Array(49).fill(409)]);
      expect(answers.filter((res) => res.status === 409).every((res) => res.body.code === 'pet_not_available')).toBe(true);
      expect(await petOf(petId)).toBe('pending');
      expect(await t.storage.adoptionViolations()).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

describe('getOrder and listStoreOrders: who sees what', () => {
  it("another customer's order is a 404 exactly like one that does not exist; staff see it", async () => {
    const { body: mine } = await place(customer, await newPet()).expect(201);
    const theirs = await order(other, mine.id).expect(404);
    const missing = await order(other, 999_999).expect(404);
    expect(theirs.body).toEqual({ code: 'not_found', message: `order ${mine.id} does not exist`, status: 404 });
    expect(missing.body).toEqual({ code: 'not_found', message: 'order 999999 does not exist', status: 404 });
    expect(Object.keys(theirs.headers).sort()).toEqual(Object.keys(missing.headers).sort());
    expect((await order(staff, mine.id).expect(200)).body).toEqual(mine);
    expect((await patchOrder(other, mine.id, 'cancelled', { 'If-Match': '"1"' }).expect(404)).body.code).toBe('not_found');
  });

  it('a customer lists their own orders, staff every order; status filters; Link pages; bad cursors and limits are 400', async () => {
    const a = (await place(customer, await newPet()).expect(201)).body;
    const b = (await place(other, await newPet()).expect(201)).body;
    const own = (await t.api.get('/v2/store/orders?limit=100').set('Authorization', other).expect(200)).body as Array<{ id: number }>;
    expect(own.map((o) => o.id)).toContain(b.id);
    expect(own.map((o) => o.id)).not.toContain(a.id);
    const all = (await t.api.get('/v2/store/orders?limit=100').set('Authorization', staff).expect(200)).body as Array<{ id: number }>;
    expect(all.map((o) => o.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(all.map((o) => o.id)).toEqual([...all.map((o) => o.id)].sort((x, y) => x - y));
    const cancelled = (await t.api.get('/v2/store/orders?status=cancelled&limit=100').set('Authorization', staff).expect(200)).body;
    expect(cancelled.every((o: { status: string }) => o.status === 'cancelled')).toBe(true);
    const first = await t.api.get('/v2/store/orders?limit=1').set('Authorization', staff).expect(200);
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))![1]!;
    const second = await t.api.get(next).set('Authorization', staff).expect(200);
    expect(second.body[0].id).toBeGreaterThan(first.body[0].id);
    await t.api.get('/v2/store/orders?cursor=forged').set('Authorization', staff).expect(400);
    await t.api.get('/v2/store/orders?limit=0').set('Authorization', staff).expect(400);
    await t.api.get('/v2/store/orders?limit=101').set('Authorization', staff).expect(400);
    await t.api.get('/v2/store/orders?status=lost').set('Authorization', staff).expect(400);
    await t.api.get('/v2/store/orders').expect(401);
  });

  it('If-None-Match with the current ETag: 304 with no body; with another: 200', async () => {
    const { body } = await place(customer, await newPet()).expect(201);
    const res = await order(customer, body.id, { 'If-None-Match': '"1"' }).expect(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe('"1"');
    await order(customer, body.id, { 'If-None-Match': 'W/"1"' }).expect(304);
    await order(customer, body.id, { 'If-None-Match': '"7"' }).expect(200);
  });
});

describe('updateOrder', () => {
  it('428 without If-Match, 412 with a stale tag (with the current ETag): nothing changes', async () => {
    const petId = await newPet();
    const { body } = await place(customer, petId).expect(201);
    expect((await patchOrder(customer, body.id, 'cancelled').expect(428)).body).toEqual(error('precondition_required', 428));
    const stale = await patchOrder(customer, body.id, 'cancelled', { 'If-Match': '"0"' }).expect(412);
    expect(stale.body).toEqual(error('precondition_failed', 412));
    expect(stale.headers.etag).toBe('"1"');
    expect((await order(customer, body.id).expect(200)).body.status).toBe('placed');
    expect(await petOf(petId)).toBe('pending');
  });

  it('a customer cancels their placed order: the pet is available again; the answer has the new ETag', async () => {
    const petId = await newPet();
    const { body } = await place(customer, petId).expect(201);
    const res = await patchOrder(customer, body.id, 'cancelled', { 'If-Match': '"1"' }).expect(200);
    expect(res.body).toMatchObject({ id: body.id, status: 'cancelled' });
    expect(res.headers.etag).toBe('"2"');
    expect(await petOf(petId)).toBe('available');
    expect((await patchOrder(customer, body.id, 'cancelled', { 'If-Match': '"2"' }).expect(409)).body).toEqual(error('invalid_transition', 409));
  });

  it('only staff complete an order (403 staff_only for its customer); the pet is sold; an adoption is final', async () => {
    const petId = await newPet();
    const { body } = await place(customer, petId).expect(201);
    expect((await patchOrder(customer, body.id, 'completed', { 'If-Match': '"1"' }).expect(403)).body).toEqual(error('staff_only', 403));
    await patchOrder(staff, body.id, 'completed', { 'If-Match': '"1"' }).expect(200);
    expect(await petOf(petId)).toBe('sold');
    expect((await patchOrder(staff, body.id, 'cancelled', { 'If-Match': '"2"' }).expect(409)).body.code).toBe('invalid_transition');
    expect((await patchOrder(staff, body.id, 'completed', { 'If-Match': '"2"' }).expect(409)).body.code).toBe('invalid_transition');
    expect((await place(other, petId).expect(409)).body.code).toBe('pet_not_available');
  });

  it('two staff changing one order with the same If-Match: one 200, one 412', async () => {
    const { body } = await place(customer, await newPet()).expect(201);
    const both = await Promise.all([
      patchOrder(staff, body.id, 'completed', { 'If-Match': '"1"' }),
      patchOrder(staff, body.id, 'cancelled', { 'If-Match': '"1"' }),
    ]);
    expect(both.map((res) => res.status).sort()).toEqual([200, 412]);
    expect(await t.storage.adoptionViolations()).toEqual([]);
  });
});

describe('updatePet', () => {
  it('is for staff only: 403 staff_only for a customer, nothing changes', async () => {
    const petId = await newPet();
    expect((await patchPet(customer, petId, { name: 'Max' }, { 'If-Match': '"1"' }).expect(403)).body).toEqual(error('staff_only', 403));
    expect((await t.api.get(`/v2/pets/${petId}`).set('Authorization', staff).expect(200)).body.name).toBe('Rex');
  });

  it('applies a JSON Merge Patch when If-Match names the current version: other fields stay; the ETag moves on', async () => {
    const petId = await newPet({ name: 'Rex', categoryId: 3 });
    const read = await t.api.get(`/v2/pets/${petId}`).set('Authorization', customer).expect(200);
    const res = await patchPet(staff, petId, { name: 'Max' }, { 'If-Match': read.headers.etag as string }).expect(200);
    expect(res.body).toEqual({ id: petId, name: 'Max', categoryId: 3, status: 'available' });
    expect(res.headers.etag).not.toBe(read.headers.etag);
    await t.api
      .get(`/v2/pets/${petId}`)
      .set({ Authorization: customer, 'If-None-Match': res.headers.etag as string })
      .expect(304);
  });

  it('428 without If-Match, 412 stale; 400 for null, {} and unknown fields; 415 for plain JSON: nothing changes', async () => {
    const petId = await newPet();
    await patchPet(staff, petId, { name: 'Max' }).expect(428);
    await patchPet(staff, petId, { name: 'Max' }, { 'If-Match': '"9"' }).expect(412);
    for (const body of [{ name: null }, {}, { id: 5 }, { status: 'lost' }]) await patchPet(staff, petId, body, { 'If-Match': '"1"' }).expect(400);
    await t.api.patch(`/v2/pets/${petId}`).set({ Authorization: staff, 'If-Match': '"1"' }).send({ name: 'Max' }).expect(415);
    expect((await t.api.get(`/v2/pets/${petId}`).set('Authorization', staff).expect(200)).headers.etag).toBe('"1"');
  });

  it('a status change that contradicts an open or completed order is a 409; other fields may change', async () => {
    const petId = await newPet();
    const { body } = await place(customer, petId).expect(201);
    const etag = (await t.api.get(`/v2/pets/${petId}`).set('Authorization', staff).expect(200)).headers.etag as string;
    expect((await patchPet(staff, petId, { status: 'available' }, { 'If-Match': etag }).expect(409)).body.code).toBe('invalid_transition');
    const renamed = await patchPet(staff, petId, { name: 'Max', status: 'pending' }, { 'If-Match': etag }).expect(200);
    await patchOrder(staff, body.id, 'completed', { 'If-Match': '"1"' }).expect(200);
    const sold = (await t.api.get(`/v2/pets/${petId}`).set('Authorization', staff).expect(200)).headers.etag as string;
    expect(sold).not.toBe(renamed.headers.etag);
    await patchPet(staff, petId, { status: 'available' }, { 'If-Match': sold }).expect(409);
  });

  it('staff may set a status directly (no order): a pet set sold cannot be ordered; only an order makes a pet pending (409)', async () => {
    const petId = await newPet();
    expect((await patchPet(staff, petId, { status: 'pending' }, { 'If-Match': '"1"' }).expect(409)).body.code).toBe('invalid_transition');
    expect(await petOf(petId)).toBe('available');
    await patchPet(staff, petId, { status: 'sold' }, { 'If-Match': '"1"' }).expect(200);
    await place(customer, petId).expect(409);
  });

  it('two staff patching one pet with the same If-Match: one 200, one 412', async () => {
    const petId = await newPet();
    const both = await Promise.all([
      patchPet(staff, petId, { name: 'A' }, { 'If-Match': '"1"' }),
      patchPet(staff, petId, { name: 'B' }, { 'If-Match': '"1"' }),
    ]);
    expect(both.map((res) => res.status).sort()).toEqual([200, 412]);
  });
});

describe('problem details', () => {
  it('an error as application/problem+json when Accept prefers it; the Error object otherwise', async () => {
    const res = await order(customer, 999_999, { Accept: 'application/json;q=0.5, application/problem+json' }).expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'order 999999 does not exist', code: 'not_found' });
    expect((await order(customer, 999_999).expect(404)).body).toEqual(error('not_found', 404));
  });
});

describe('the adoption invariant check', () => {
  it('finds a pet whose status contradicts its orders (a planted inconsistency), and nothing once it is undone', async () => {
    const petId = await newPet();
    const { body } = await place(customer, petId).expect(201);
    await rawExecute(t.databaseUrl, "update pets set status = 'available' where id = ?", [petId]);
    expect(await t.storage.adoptionViolations()).toEqual([`pet ${petId} is available but has placed order ${body.id}`]);
    await rawExecute(t.databaseUrl, "update pets set status = 'pending' where id = ?", [petId]);
    expect(await t.storage.adoptionViolations()).toEqual([]);
  });
});
