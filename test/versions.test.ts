/**
 * Version 2 beside version 1, in one process: same data, keys, limits (one
 * quota for both), headers and Error objects; getPet only in v1; metrics and
 * access-log lines carry the version.
 */
import { startTestApp, type TestApp } from './support/test-app';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

const accessLines = (logs: string) =>
  logs
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['msg'] === 'request');

describe('/v1 and /v2 side by side', () => {
  it('serve the same data with the same keys: a pet created through one is listed by the other', async () => {
    const viaV2 = await t.api.post('/v2/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    const viaV1 = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Misty', categoryId: 2 }).expect(201);
    for (const version of ['v1', 'v2']) {
      const listed = await t.api.get(`/${version}/pets`).set('Authorization', t.auth).expect(200);
      expect(listed.body).toEqual([viaV2.body, viaV1.body]);
    }
    expect((await t.api.get(`/v1/pets/${viaV2.body.id}`).set('Authorization', t.auth).expect(200)).body).toEqual(viaV2.body);
  });

  it("getPet: v1's is deprecated and sends no ETag; v2's (back in 2.3) is not deprecated and sends the pet's ETag", async () => {
    await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    const v2 = await t.api.get('/v2/pets/1').set('Authorization', t.auth).expect(200);
    expect(v2.headers['etag']).toBe('"1"');
    expect(v2.headers['deprecation']).toBeUndefined();
    const v1 = await t.api.get('/v1/pets/1').set('Authorization', t.auth).expect(200);
    expect(v1.body).toEqual(v2.body);
    expect(v1.headers['deprecation']).toBeDefined();
    expect(v1.headers['etag']).toBeUndefined();
  });

  it("one quota for both versions: a key's requests to v1 and v2 count together", async () => {
    const first = await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    const second = await t.api.get('/v2/pets').set('Authorization', t.auth).expect(200);
    const third = await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    expect([first, second, third].map((res) => res.headers['x-ratelimit-remaining'])).toEqual(['59', '58', '57']);
  });

  it('the same headers and Error objects on both: auth, validation, limits, request ids', async () => {
    for (const version of ['v1', 'v2']) {
      const unauthorized = await t.api.get(`/${version}/pets`).set('X-Request-Id', `req-${version}`).expect(401);
      expect(unauthorized.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(unauthorized.headers['x-request-id']).toBe(`req-${version}`);
      const invalid = await t.api.get(`/${version}/pets?limit=1000`).set('Authorization', t.auth).expect(400);
      expect(invalid.body).toEqual({ code: 'invalid_request', status: 400, message: 'query.limit must be <= 100' });
      expect(invalid.headers['content-security-policy']).toBeDefined();
      await t.api.delete(`/${version}/pets`).set('Authorization', t.auth).expect(405);
    }
    // Implemented in v2.3; still a stub in v1.
    await t.api.get('/v1/store/orders').set('Authorization', t.auth).expect(501);
    await t.api.get('/v2/store/orders').set('Authorization', t.auth).expect(200);
  });

  it("paging links and idempotent creates work per version, with the version's own base path", async () => {
    for (let i = 0; i < 3; i++)
      await t.api
        .post('/v2/pets')
        .set('Authorization', t.auth)
        .send({ name: `pet ${i}`, categoryId: 1 })
        .expect(201);
    const page = await t.api.get('/v2/pets?limit=2').set('Authorization', t.auth).expect(200);
    expect(page.headers['link']).toMatch(/^<\/v2\/pets\?limit=2&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    const first = await t.api.post('/v1/pets').set('Authorization', t.auth).set('Idempotency-Key', 'across').send({ name: 'Rex', categoryId: 1 }).expect(201);
    // The same store behind both versions: a retry through v2 replays the v1 create.
    const retry = await t.api.post('/v2/pets').set('Authorization', t.auth).set('Idempotency-Key', 'across').send({ name: 'Rex', categoryId: 1 }).expect(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('metrics and access-log lines carry the version', async () => {
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/v2/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/v2/nowhere').set('Authorization', t.auth).expect(404);
    await t.api.get('/healthz').expect(200);
    const counts = (await t.metrics.requestDuration.get()).values.filter((value) => value.metricName === 'pas_http_request_duration_seconds_count');
    const labels = counts.map((value) => `${value.labels.version} ${value.labels.operation} ${value.labels.status}`).sort();
    expect(labels).toEqual(['none healthz 200', 'v1 listPets 200', 'v2 listPets 200', 'v2 unmatched 404']);
    expect(accessLines(t.logs()).map((line) => [line['path'], line['operation'], line['version']])).toEqual([
      ['/v1/pets', 'listPets', 'v1'],
      ['/v2/pets', 'listPets', 'v2'],
      ['/v2/nowhere', 'unmatched', 'v2'],
      ['/healthz', 'healthz', 'none'],
    ]);
  });
});
