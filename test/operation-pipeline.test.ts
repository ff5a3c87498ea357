/**
 * The compiled per-operation pipelines (src/pipeline/operation-pipeline.ts): a
 * request is matched once, as the validator would match it, and every layer
 * stand-in of the cost ledger answers what the full stack answers.
 */
import { startTestApp, type TestApp } from './support/test-app';
import { loadSpec } from './support/contracts';
import { handlers } from '../src/service/handlers';
import request from 'supertest';
import { routeTable } from '../src/engine/contract/route-table';
import { LAYERS, parseLayers, standInHooks } from '../bench/ledger-stand-ins';

describe('matching a request to its operation', () => {
  let t: TestApp;
  beforeAll(async () => {
    const spec = loadSpec() as any;
    // A static path next to a template it also matches, declaring another method.
    spec.paths['/pets/mine'] = { post: { ...spec.paths['/pets'].post, operationId: 'adoptMine' } };
    t = await startTestApp({ contract: spec });
  });
  afterAll(() => t.close());

  it('the static path wins over the template, as in the validator: GET /pets/mine is 405, not getPet', async () => {
    const res = await t.api.get('/v1/pets/mine').set('Authorization', t.auth).expect(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers['allow']).toBe('POST');
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('GET /pets/mine is labelled unmatched in the metrics and the access log, never getPet', async () => {
    await t.api.get('/v1/pets/mine').set('Authorization', t.auth).set('X-Request-Id', 'mine-1').expect(405);
    const durations = await t.metrics.requestDuration.get();
    const labelled = durations.values.filter((value) => value.metricName === 'pas_http_request_duration_seconds_count' && value.labels.status === 405);
    expect(labelled.map((value) => value.labels.operation)).toEqual(['unmatched']);
    const line = t
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
      .find((entry) => entry.requestId === 'mine-1' && entry.msg === 'request');
    expect(line).toMatchObject({ operation: 'unmatched', status: 405 });
  });

  it('the route table matches in the validator\'s order: static segments first, the first matching path decides', async () => {
    const table = routeTable(t.service.contract, '/v1');
    expect(table.paths.map((path) => path.template)).toEqual(['/pets/mine', '/pets/{petId}', '/pets', '/store/orders']);
    expect(table.match('GET', '/v1/pets/mine')).toMatchObject({ path: { template: '/pets/mine' }, operation: undefined });
    expect(table.match('POST', '/V1/PETS/MINE/')?.operation?.operationId).toBe('adoptMine');
    expect(table.match('GET', '/v1/pets/12')?.operation?.operationId).toBe('getPet');
    expect(table.match('GET', '/v1/pets/12/x')).toBeUndefined();
  });

  it('the template still serves other ids, case-insensitively and with a trailing slash', async () => {
    const created = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    const res = await t.api.get(`/V1/PETS/${created.body.id}/`).set('Authorization', t.auth).expect(200);
    expect(res.body).toEqual(created.body);
  });

  it('an undeclared method on a declared path is still the validator\'s 405, after authentication', async () => {
    await t.api.delete('/v1/pets/1').expect(401);
    const res = await t.api.delete('/v1/pets/1').set('Authorization', t.auth).expect(405);
    expect(res.headers['allow']).toBe('GET');
  });

  it('an undecodable path parameter is a 400 carrying the rate-limit headers', async () => {
    const res = await t.api.get('/v1/pets/%FF').set('Authorization', t.auth).expect(400);
    expect(res.body.message).toMatch(/percent-encoded/);
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });
});

describe('HEAD on a GET operation (answered 405 by the validator)', () => {
  it('keeps the operation\'s deprecation headers', async () => {
    const t = await startTestApp();
    try {
      const res = await t.api.head('/v1/pets/1').set('Authorization', t.auth).expect(405);
      expect(res.headers['deprecation']).toBe('@1795219200');
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    } finally {
      await t.close();
    }
  });

  it('is never a 401 on a `security: []` operation, and is counted per IP', async () => {
    const spec = loadSpec() as any;
    spec.paths['/pets'].get.security = [];
    const t = await startTestApp({ contract: spec, rateLimits: { ipPerMinute: 5 } });
    try {
      const res = await t.api.head('/v1/pets').expect(405);
      expect(res.headers['ratelimit-policy']).toBe('"ip";q=5;w=60');
    } finally {
      await t.close();
    }
  });
});

describe('a stage that fails without an error value', () => {
  it('is one 500, counted once: it never falls through to the routes after it', async () => {
    const throwsNothing = (async () => {
      await Promise.resolve();
      throw undefined;
    }) as any;
    const t = await startTestApp({ handlers: { ...handlers, listPets: throwsNothing } });
    try {
      const res = await t.api.get('/v1/pets').set('Authorization', t.auth).expect(500);
      expect(res.body.code).toBe('internal_error');
      expect(res.headers['x-ratelimit-remaining']).toBe('59');
      const next = await t.api.get('/v1/pets/1').set('Authorization', t.auth);
      expect(next.headers['x-ratelimit-remaining']).toBe('58');
    } finally {
      await t.close();
    }
  });
});

describe('the key cache', () => {
  it('holds one entry per key, whatever the spelling of the header', async () => {
    const t = await startTestApp();
    try {
      const key = t.auth.slice('Bearer '.length);
      await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
      for (const spelling of [`bearer  ${key}`, `BEARER   ${key} `, `Bearer ${key}`]) {
        await t.api.get('/v1/pets').set('Authorization', spelling).expect(200);
      }
      const lookups = await t.metrics.keyCacheLookups.get();
      const count = (result: string) => lookups.values.find((value) => value.labels.result === result)?.value ?? 0;
      expect(count('miss')).toBe(1);
      expect(count('hit')).toBe(3);
    } finally {
      await t.close();
    }
  });
});

describe('the cost ledger stand-ins', () => {
  it('refuses an unknown layer name', () => {
    expect(() => parseLayers('authentication,nope')).toThrow(/unknown layer "nope"/);
  });

  it('the authentication stand-in replays per credentials: another key is never served as the first caller', async () => {
    const full = await startTestApp();
    const bypassed = await startTestApp({ phaseHooks: standInHooks(['authentication']), databaseUrl: full.databaseUrl });
    try {
      await request(bypassed.app).get('/v1/pets').set('Authorization', full.auth).expect(200);
      await request(bypassed.app).get('/v1/pets').set('Authorization', `Bearer pas_${'x'.repeat(43)}`).expect(401);
      await request(bypassed.app).get('/v1/pets').expect(401);
      await request(bypassed.app).get('/v1/pets').set('Authorization', full.auth).expect(200);
    } finally {
      await bypassed.close();
      await full.close();
    }
  });

  it.each(LAYERS)('without %s, the answers are the full stack\'s', async (layer) => {
    const full = await startTestApp();
    const bypassed = await startTestApp({ phaseHooks: standInHooks([layer]), databaseUrl: full.databaseUrl });
    try {
      await full.api.post('/v1/pets').set('Authorization', full.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
      for (const url of ['/v1/pets?limit=5', '/v1/pets/1']) {
        const expected = await full.api.get(url).set('Authorization', full.auth).expect(200);
        for (let i = 0; i < 2; i++) {
          const res = await request(bypassed.app).get(url).set('Authorization', full.auth).expect(200);
          expect(res.body).toEqual(expected.body);
        }
      }
      for (let i = 0; i < 2; i++) {
        const res = await request(bypassed.app).post('/v1/pets').set('Authorization', full.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
        expect(res.body).toMatchObject({ name: 'Rex', categoryId: 1, status: 'available' });
      }
    } finally {
      await bypassed.close();
      await full.close();
    }
  });
});
