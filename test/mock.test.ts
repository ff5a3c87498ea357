/**
 * Mock mode (MOCK_RESPONSES=true, `npm run mock`): a stubbed operation answers
 * an example of the contract instead of 501, after the same authentication,
 * limits and request validation; implemented operations stay real.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { startTestApp, testConfig, type TestApp } from './support/test-app';
import { handlers } from '../src/service/handlers';
import { notImplementedHandler } from '../src/engine/handlers';
import { compose } from '../src/compose';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';
import { loadConfig } from '../src/config';
import { copyProject } from './support/project-copy';
import { runServerToExit } from './support/processes';
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

describe('an invalid example in the YAML', () => {
  const broken = (): ReturnType<typeof loadSpec> => {
    const spec = loadSpec();
    objectAt(spec, 'components', 'schemas', 'Pet').examples = [{ id: 1, name: 'Rex', categoryId: 1, status: 'adopted' }];
    return spec;
  };

  it('stops the composition in mock mode with a message naming the operation, status and rule', async () => {
    const t = await startTestApp();
    try {
      await expect(
        compose(testConfig({ settings: { mockResponses: true, logLevel: 'silent' } }), { storage: t.storage, contract: broken(), handlers: registry }),
      ).rejects.toThrow(
        /^mock: the example generated from the schema \(from its `examples`, else a sample: fix them or add a response `example`\) of GET \/pets\/\{petId\} \(getPet\) 200 does not match its schema: data\/status must be equal to one of the allowed values/,
      );
    } finally {
      await t.close();
    }
  });

  it('stops the real entry point at start (exit 1) when the response example is invalid', () => {
    const root = copyProject();
    const specFile = path.join(root, 'openapi/v1/openapi.yaml');
    const spec = parse(readFileSync(specFile, 'utf8'));
    spec.paths['/store/orders'].get.responses['200'] = {
      description: 'Orders.',
      content: { 'application/json': { schema: { type: 'array', items: { type: 'integer' } }, examples: { some: { value: [1, 'two'] } } } },
    };
    writeFileSync(specFile, stringify(spec));
    const result = runServerToExit({ MOCK_RESPONSES: 'true', DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, PORT: '0' }, root);
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      'failed to start: mock: the example "some" of GET /store/orders (listStoreOrders) 200 does not match its schema: data/1 must be integer',
    );
  });
});

describe('MOCK_RESPONSES', () => {
  it('is off by default, true/1 turn it on, anything else is refused', () => {
    expect(loadConfig({}).mockResponses).toBe(false);
    expect(loadConfig({ MOCK_RESPONSES: '1' }).mockResponses).toBe(true);
    expect(() => loadConfig({ MOCK_RESPONSES: 'yes' })).toThrow(/MOCK_RESPONSES/);
  });
});
