/**
 * Creates that can be retried safely (version 1.1, the IETF Idempotency-Key
 * draft): one pet per key and API key, the first response replayed, 422 for
 * another body, 409 while the first is in flight, kept in the database.
 */
import { appOn, startTestApp, type TestApp } from './support/test-app';
import type { Storage } from '../src/service/storage';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

const create = (app: Pick<TestApp, 'api'>, auth: string, key: string | undefined, body: object = { name: 'Rex', categoryId: 1 }) => {
  const test = app.api.post('/v1/pets').set('Authorization', auth);
  if (key !== undefined) test.set('Idempotency-Key', key);
  return test.send(body);
};
const count = async (storage: Storage = t.storage) => (await storage.pets.list({ limit: 100 })).length;

describe('Idempotency-Key on createPet', () => {
  it('the same key and body: the first response again, marked as a replay, and nothing stored', async () => {
    const first = await create(t, t.auth, 'k-1').expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const again = await create(t, t.auth, 'k-1').expect(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(await count()).toBe(1);
  });

  it('the same body in another key order, or with the default written out, is the same request', async () => {
    const first = await create(t, t.auth, 'k-order', { name: 'Rex', categoryId: 1 }).expect(201);
    await create(t, t.auth, 'k-order', { categoryId: 1, name: 'Rex', status: 'available' }).expect(201);
    expect((await create(t, t.auth, 'k-order', { categoryId: 1, name: 'Rex' }).expect(201)).body).toEqual(first.body);
    expect(await count()).toBe(1);
  });

  it('the same key with another body is a 422 Error object, and nothing is stored', async () => {
    await create(t, t.auth, 'k-2').expect(201);
    const res = await create(t, t.auth, 'k-2', { name: 'Misty', categoryId: 2 }).expect(422);
    expect(res.body).toEqual({ code: 'idempotency_key_reused', status: 422, message: expect.any(String) });
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(await count()).toBe(1);
  });

  it('without a key, every create stores a pet', async () => {
    await create(t, t.auth, undefined).expect(201);
    await create(t, t.auth, undefined).expect(201);
    expect(await count()).toBe(2);
  });

  it('keys of different API keys never collide', async () => {
    const other = await t.issueKey('pro');
    const mine = await create(t, t.auth, 'shared-key').expect(201);
    const theirs = await create(t, other, 'shared-key', { name: 'Misty', categoryId: 2 }).expect(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(await count()).toBe(2);
  });

  it('a request whose key is still in flight gets 409; once it completes, retries replay it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: Storage = {
      ...t.storage,
      pets: {
        ...t.storage.pets,
        create: async (...args) => {
          await gate;
          return t.storage.pets.create(...args);
        },
      },
    };
    const slowApp = await appOn(slow);
    try {
      const first = create(slowApp, t.auth, 'k-slow')
        .expect(201)
        .then((res) => res);
      // The first request holds the claim once the retry below cannot insert it.
      for (let i = 0; i < 50; i++) {
        const row = await t.storage.idempotencyKeys.find('key:1', 'k-slow');
        if (row) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const retry = await create(t, t.auth, 'k-slow').expect(409);
      expect(retry.body).toEqual({ code: 'idempotency_key_in_use', status: 409, message: expect.any(String) });
      release();
      const done = await first;
      const replay = await create(t, t.auth, 'k-slow').expect(201);
      expect(replay.body).toEqual(done.body);
      expect(await count()).toBe(1);
    } finally {
      release();
      await slowApp.close();
    }
  });

  it('a failed create gives its key up: the retry creates the pet', async () => {
    let failures = 1;
    const flaky: Storage = {
      ...t.storage,
      pets: {
        ...t.storage.pets,
        create: async (...args) => {
          if (failures-- > 0) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return t.storage.pets.create(...args);
        },
      },
    };
    const flakyApp = await appOn(flaky, { logLevel: 'silent' });
    try {
      await create(flakyApp, t.auth, 'k-flaky').expect(503);
      const res = await create(flakyApp, t.auth, 'k-flaky').expect(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect((await create(t, t.auth, 'k-flaky').expect(201)).body).toEqual(res.body);
      expect(await count()).toBe(1);
    } finally {
      await flakyApp.close();
    }
  });

  it('a claim whose instance died (its lock ran out) is taken over, and finds the pet it had stored', async () => {
    let now = Date.now();
    const crashing: Storage = {
      ...t.storage,
      // The pet is stored, then the instance "dies" before it records the response.
      idempotencyKeys: { ...t.storage.idempotencyKeys, complete: () => Promise.reject(new Error('killed')) },
    };
    const dying = await appOn(crashing, { logLevel: 'silent', now: () => now });
    const survivor = await appOn(t.storage, { now: () => now });
    try {
      await create(dying, t.auth, 'k-crash').expect(500);
      await create(survivor, t.auth, 'k-crash').expect(409);
      now += 31_000; // past the lock
      const res = await create(survivor, t.auth, 'k-crash').expect(201);
      expect(await count()).toBe(1);
      expect((await create(survivor, t.auth, 'k-crash').expect(201)).body).toEqual(res.body);
    } finally {
      await dying.close();
      await survivor.close();
    }
  });

  it('is kept in the database: a retry after a restart still replays; an expired key is forgotten and purged', async () => {
    let now = Date.now();
    const first = await create(t, t.auth, 'k-restart').expect(201);
    const restarted = await startTestApp({ databaseUrl: t.databaseUrl, now: () => now });
    try {
      const again = await create(restarted, t.auth, 'k-restart').expect(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      now += 24 * 3_600_000 + 1_000; // past the retention window (24 h by default)
      const fresh = await create(restarted, t.auth, 'k-restart').expect(201);
      expect(fresh.body.id).not.toBe(first.body.id);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      now += 24 * 3_600_000 + 1_000;
      expect(await t.storage.idempotencyKeys.purgeExpired(new Date(now))).toBe(1);
      expect(await t.storage.idempotencyKeys.find('key:1', 'k-restart')).toBeUndefined();
    } finally {
      await restarted.close();
    }
  });

  it('with several instances on one database, concurrent retries create exactly one pet', async () => {
    const instances = [t, await startTestApp({ databaseUrl: t.databaseUrl }), await startTestApp({ databaseUrl: t.databaseUrl })];
    try {
      for (const key of ['multi-1', 'multi-2', 'multi-3']) {
        const responses = await Promise.all(
          Array.from({ length: 9 }, (_, i) => {
            const test = instances[i % 3]!.api.post('/v1/pets').set('Authorization', t.auth).set('Idempotency-Key', key).send({ name: key, categoryId: 1 });
            // Each is a 201 (first or replay) or a 409 (the first still in flight): both are declared.
            return test.then((res) => res);
          }),
        );
        expect(responses.every((res) => res.status === 201 || res.status === 409)).toBe(true);
        expect(new Set(responses.filter((res) => res.status === 201).map((res) => res.body.id)).size).toBe(1);
      }
      expect(await count()).toBe(3);
    } finally {
      await instances[1]!.close();
      await instances[2]!.close();
    }
  });

  it('the key is bounded by the contract (1 to 255 printable ASCII characters)', async () => {
    await create(t, t.auth, 'x'.repeat(256)).expect(400);
    await create(t, t.auth, 'has space').expect(400);
    await create(t, t.auth, 'x'.repeat(255)).expect(201);
    expect(await count()).toBe(1);
  });
});
