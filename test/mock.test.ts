/**
 * Mock mode (MOCK_RESPONSES=true, `npm run mock`): a stubbed operation answers
 * an example of the contract instead of 501, after the same authentication,
 * limits and request validation; implemented operations stay real.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { startTestApp, type TestApp } from './support/test-app';
import { handlers } from '../src/service/handlers';
import { notImplementedHandler } from '@spec-first/engine';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';
import { loadConfig, withArguments } from '../src/config';
import { copyProject } from './support/project-copy';
import { startServer } from './support/processes';
import { createKeyWithCli } from './support/server-env';
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { tempDir } from './support/paths';

/** getPet is a stub here; createPet and listPets stay implemented. */
const registry = { ...handlers, getPet: notImplementedHandler('getPet') };

describe.each([false, true])('mock mode (response validation %s)', (validateResponses) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ handlers: registry, settings: { mockResponses: true, validateResponses } });
  });
  afterAll(() => t.close());

  it('a stub answers the lowest 2xx with the example of the contract (Pet.examples)', async () => {
    const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).expect(200);
    expect(res.body).toEqual({ id: 1, name: 'Rex', categoryId: 1, status: 'available' });
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(res.headers['deprecation']).toBeDefined(); // the operation's headers still apply
  });

  it('Prefer: code=404 answers that declared response, with an Error object agreeing with the status', async () => {
    const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=404').expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'pet 42 does not exist', status: 404 });
  });

  it('Prefer: code=429, example=banned picks a named example and sets the declared headers', async () => {
    const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=429, example=banned').expect(429);
    expect(res.body.code).toBe('key_temporarily_banned');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('an undeclared code or an unknown example is a 400 naming what exists', async () => {
    const code = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=418').expect(400);
    expect(code.body.message).toBe('Prefer: code=418 is not a declared response of getPet; declared: 200, 400, 401, 404, 429, 503');
    const example = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=429; example="nope"').expect(400);
    expect(example.body.message).toBe('Prefer: example=nope is not an example of getPet 429; its examples: rateLimited, banned');
  });

  it('authentication and request validation still come first', async () => {
    await t.api.get('/v1/pets/7').expect(401);
    const bad = await t.api.get('/v1/pets/abc').set('Authorization', t.auth).set('Prefer', 'code=200').expect(400);
    expect(bad.body.message).toBe('params.petId must be integer');
  });

  it('implemented operations stay real: a created pet is stored and listed', async () => {
    const created = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Bolt', categoryId: 3 }).expect(201);
    const listed = await t.api.get('/v1/pets').set('Authorization', t.auth).set('Prefer', 'example=empty').expect(200);
    expect(listed.body).toContainEqual(created.body);
    expect(listed.body).not.toEqual([]);
  });

  it('an operation with no 2xx to mock (listStoreOrders) still answers 501', async () => {
    const res = await t.api.get('/v1/store/orders').set('Authorization', t.auth).expect(501);
    expect(res.body.code).toBe('not_implemented');
  });
});

describe('a bad Prefer header on an operation that declares no 400 (response validation on)', () => {
  it('is still a 400 Error object, not a 500', async () => {
    const spec = loadSpec();
    const { 400: _bad, default: _default, ...responses } = objectAt(spec, 'paths', '/pets/{petId}', 'get', 'responses');
    objectAt(spec, 'paths', '/pets/{petId}', 'get').responses = responses;
    const t = await startTestApp({ contract: spec, handlers: registry, settings: { mockResponses: true, validateResponses: true } });
    try {
      const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=418').expect(400);
      expect(res.body.code).toBe('invalid_request');
    } finally {
      await t.close();
    }
  });
});

describe('stateful mock mode (npm run mock -- --stateful)', () => {
  it('is MOCK_RESPONSES=stateful, which the --stateful argument sets', () => {
    expect(loadConfig(withArguments({}, ['--stateful'])).mockResponses).toBe('stateful');
    expect(loadConfig({ MOCK_RESPONSES: 'stateful' }).mockResponses).toBe('stateful');
    expect(loadConfig(withArguments({ MOCK_RESPONSES: 'true' }, [])).mockResponses).toBe(true);
    expect(() => loadConfig({ MOCK_RESPONSES: 'yes' })).toThrow(/MOCK_RESPONSES: must be true, false or stateful/);
  });

  it('answers every operation from memory, implemented or not: nothing reaches the database, and keys are still checked', async () => {
    // Response validation on, and the test client checks every answer against the contract too.
    const t = await startTestApp({ settings: { mockResponses: 'stateful', validateResponses: true } });
    try {
      await t.api.post('/v1/pets').send({ name: 'Bolt', categoryId: 3 }).expect(401);
      const created = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Bolt', categoryId: 3 }).expect(201);
      expect(created.body).toEqual({ id: 1, name: 'Bolt', categoryId: 3, status: 'available' });
      expect(created.headers['x-mock']).toBe('stateful');
      expect((await t.api.get('/v1/pets/1').set('Authorization', t.auth).expect(200)).body).toEqual(created.body);
      expect((await t.api.get('/v1/pets?status=available').set('Authorization', t.auth).expect(200)).body).toEqual([created.body]);
      expect((await t.api.get('/v1/pets?status=sold').set('Authorization', t.auth).expect(200)).body).toEqual([]);
      expect((await t.api.get('/v1/pets/2').set('Authorization', t.auth).expect(404)).body.code).toBe('not_found');
      expect(await t.storage.pets.list({ limit: 10 })).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('conditional requests work on what it keeps: ETag, 304, 428, 412, and a merge patch under If-Match (v2)', async () => {
    const t = await startTestApp({ settings: { mockResponses: 'stateful', validateResponses: true } });
    try {
      const auth = { Authorization: t.auth };
      const { body: pet } = await t.api.post('/v2/pets').set(auth).send({ name: 'Bolt', categoryId: 3 }).expect(201);
      const read = await t.api.get(`/v2/pets/${pet.id}`).set(auth).expect(200);
      expect(read.headers.etag).toBe('"1"');
      await t.api
        .get(`/v2/pets/${pet.id}`)
        .set({ ...auth, 'If-None-Match': '"1"' })
        .expect(304);
      const patch = (headers: Record<string, string>) =>
        t.api
          .patch(`/v2/pets/${pet.id}`)
          .set({ ...auth, 'Content-Type': 'application/merge-patch+json', ...headers })
          .send('{"name":"Max"}');
      expect((await patch({}).expect(428)).body.code).toBe('precondition_required');
      expect((await patch({ 'If-Match': '"7"' }).expect(412)).body.code).toBe('precondition_failed');
      const changed = await patch({ 'If-Match': '"1"' }).expect(200);
      expect(changed.body).toEqual({ ...pet, name: 'Max' });
      expect(changed.headers.etag).toBe('"2"');
      expect((await t.api.get(`/v2/pets/${pet.id}`).set(auth).expect(200)).body.name).toBe('Max');
      const order = await t.api.post('/v2/store/orders').set(auth).send({ petId: pet.id }).expect(201);
      expect(order.headers.location).toBe(`/v2/store/orders/${order.body.id}`);
      expect((await t.api.get(order.headers.location!).set(auth).expect(200)).body).toEqual(order.body);
    } finally {
      await t.close();
    }
  });

  it('the real entry point reads --stateful (what `npm run mock -- --stateful` appends) and says so at start', async () => {
    const env = { MOCK_RESPONSES: 'true', DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` };
    const server = await startServer(env, { args: ['--stateful'] });
    try {
      expect(server.output()).toContain('stateful mock: every operation is answered by the mock');
      const headers = { authorization: `Bearer ${createKeyWithCli(env, '--plan', 'free')}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bolt', categoryId: 3 }) });
      expect(created.headers.get('x-mock')).toBe('stateful');
      const { id } = (await created.json()) as { id: number };
      expect(await (await fetch(`${server.url}/v1/pets/${id}`, { headers })).json()).toMatchObject({ id, name: 'Bolt' });
    } finally {
      await server.stop();
    }
  });
});

describe('without mock mode', () => {
  it('a stub answers 501 not_implemented and ignores Prefer', async () => {
    const t = await startTestApp({ handlers: registry });
    try {
      const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=404').expect(501);
      expect(res.body).toEqual({ code: 'not_implemented', message: 'getPet is declared in the contract but not implemented yet', status: 501 });
      // The framework's answer, like a 401: in the access log, not logged as a failure.
      expect(t.logs()).toContain('"status":501');
      expect(t.logs()).not.toContain('request failed');
    } finally {
      await t.close();
    }
  });
});

describe('an invalid example in the YAML (documents written by people carry them)', () => {
  const broken = (): ReturnType<typeof loadSpec> => {
    const spec = loadSpec();
    objectAt(spec, 'components', 'schemas', 'Pet').examples = [{ id: 1, name: 'Rex', categoryId: 1, status: 'adopted' }];
    return spec;
  };

  it('is warned of once at start, naming the operation and example, and answered with a sample the schema accepts, marked', async () => {
    const t = await startTestApp({ contract: broken(), handlers: registry, settings: { mockResponses: true, validateResponses: true } });
    try {
      const warning =
        'mock: the example generated from the schema (from its `examples`, else a sample) of GET /pets/{petId} (getPet) 200 does not match its schema ' +
        '(data/status must be equal to one of the allowed values); a sample generated from the schema is sent instead, marked X-Mock-Replaced-Example: example';
      expect(t.logs().split(warning).length - 1).toBe(1);
      for (let i = 0; i < 2; i++) {
        // Strict response validation is on: the answer is valid against the contract.
        const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).expect(200);
        expect(res.headers['x-mock-replaced-example']).toBe('example');
        expect(['available', 'pending', 'sold']).toContain(res.body.status);
        expect(typeof res.body.name).toBe('string');
      }
      expect(t.logs().split(warning).length - 1).toBe(1); // once, at start, not per request
      // Valid examples of the same document are served as written, unmarked.
      const banned = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('Prefer', 'code=429, example=banned').expect(429);
      expect(banned.body.code).toBe('key_temporarily_banned');
      expect(banned.headers['x-mock-replaced-example']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('an example nothing valid can stand in for (a pattern the sampler cannot meet) is sent as written, marked X-Mock-Invalid-Example', async () => {
    const spec = loadSpec();
    objectAt(spec, 'paths', '/pets/{petId}', 'get', 'responses')['200'] = {
      description: 'A tag.',
      content: { 'application/json': { schema: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$' }, examples: { tag: { value: 'nope' } } } },
    };
    const t = await startTestApp({ contract: spec, handlers: registry, settings: { mockResponses: true } });
    try {
      expect(t.logs()).toContain(
        'mock: the example \\"tag\\" of GET /pets/{petId} (getPet) 200 does not match its schema (data must match pattern \\"^[A-Z]{3}-[0-9]{4}$\\"), and no sample the schema accepts could be generated; it is sent as written, marked X-Mock-Invalid-Example: tag',
      );
      // Not through the test client, whose oracle would refuse the body: it breaks the contract, which is the point.
      const res = await request(t.app).get('/v1/pets/7').set('Authorization', t.auth).expect(200);
      expect(res.body).toBe('nope');
      expect(res.headers['x-mock-invalid-example']).toBe('tag');
    } finally {
      await t.close();
    }
  });

  it('the real entry point starts (npm run mock), warns on its log, and Prefer: example= still picks the named example, replaced', async () => {
    const root = copyProject();
    const specFile = path.join(root, 'openapi/v1/openapi.yaml');
    const spec = parse(readFileSync(specFile, 'utf8'));
    spec.paths['/store/orders'].get.responses['200'] = {
      description: 'Orders.',
      content: {
        'application/json': {
          schema: { type: 'array', items: { type: 'integer' } },
          examples: { some: { value: [1, 'two'] }, fine: { value: [3] } },
        },
      },
    };
    writeFileSync(specFile, stringify(spec));
    const env = { MOCK_RESPONSES: 'true', DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` };
    const server = await startServer(env, { projectRoot: root });
    try {
      expect(server.output()).toContain(
        'mock: the example \\"some\\" of GET /store/orders (listStoreOrders) 200 does not match its schema (data/1 must be integer); a sample generated from the schema is sent instead, marked X-Mock-Replaced-Example: some',
      );
      const key = createKeyWithCli(env, '--plan', 'free');
      const some = await fetch(`${server.url}/v1/store/orders`, { headers: { authorization: `Bearer ${key}`, prefer: 'example=some' } });
      expect(some.status).toBe(200);
      expect(some.headers.get('x-mock-replaced-example')).toBe('some');
      expect(((await some.json()) as unknown[]).every((item) => Number.isInteger(item))).toBe(true);
      const fine = await fetch(`${server.url}/v1/store/orders`, { headers: { authorization: `Bearer ${key}`, prefer: 'example=fine' } });
      expect(await fine.json()).toEqual([3]);
      expect(fine.headers.get('x-mock-replaced-example')).toBeNull();
    } finally {
      await server.stop();
    }
  });

  it('lint:api keeps reporting the bad example', () => {
    const root = copyProject();
    const specFile = path.join(root, 'openapi/v1/openapi.yaml');
    const spec = parse(readFileSync(specFile, 'utf8'));
    spec.components.schemas.Pet.examples = [{ id: 1, name: 'Rex', categoryId: 1, status: 'adopted' }];
    writeFileSync(specFile, stringify(spec));
    const result = spawnSync('npm', ['run', '--silent', 'lint:api'], { cwd: root, encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/no-invalid-schema-examples/);
  });
});

describe('MOCK_RESPONSES', () => {
  it('is off by default, true/1 turn it on, anything else is refused', () => {
    expect(loadConfig({}).mockResponses).toBe(false);
    expect(loadConfig({ MOCK_RESPONSES: '1' }).mockResponses).toBe(true);
    expect(() => loadConfig({ MOCK_RESPONSES: 'yes' })).toThrow(/MOCK_RESPONSES/);
  });
});
