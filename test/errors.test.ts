import request from 'supertest';
import type { Express } from 'express';
import express from 'express';
import { handlers } from '../src/service/handlers';
import type { Handler } from '../src/service/handlers';
import { int64Format } from '@spec-first/engine/testing';
import { assertResponseConforms } from './support/spec-conformance';
import { startTestApp, type TestApp } from './support/test-app';
import { heapAfterGcMb } from './support/heap';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

const expectErrorObject = (res: request.Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ code, status, message: expect.any(String) });
};

describe('every error is an Error object {code, message, status}', () => {
  it('404 for an unknown route under the base path', async () => {
    const res = await t.api.get('/v1/kittens').set('Authorization', t.auth);
    expectErrorObject(res, 404, 'not_found');
  });

  it('404 for an unknown route outside the base path', async () => {
    expectErrorObject(await t.api.get('/pets'), 404, 'not_found');
    expectErrorObject(await t.api.get('/v3/pets'), 404, 'not_found');
  });

  it('405 with Allow for a known path and an undeclared method', async () => {
    const res = await t.api.delete('/v1/pets').set('Authorization', t.auth);
    expectErrorObject(res, 405, 'method_not_allowed');
    expect(res.headers.allow?.split(/, */).sort()).toEqual(['GET', 'POST']);
    expect(res.body.message).toBe('DELETE is not allowed on /v1/pets; allowed: POST, GET');
    const put = await t.api.put('/v1/pets/1').set('Authorization', t.auth).send({});
    expectErrorObject(put, 405, 'method_not_allowed');
    expect(put.headers.allow).toBe('GET');
  });

  it('an unknown path or method is still 404/405 when its query repeats a parameter (the route is decided first)', async () => {
    expectErrorObject(await t.api.get('/v1/kittens?a=1&a=2').set('Authorization', t.auth), 404, 'not_found');
    const res = await t.api.delete('/v1/pets?x=1&x=2').set('Authorization', t.auth);
    expectErrorObject(res, 405, 'method_not_allowed');
    expect(res.headers.allow?.split(/, */).sort()).toEqual(['GET', 'POST']);
  });

  it('Content-Type parameters cost nothing per distinct value (the validator would compile and keep one per value)', async () => {
    const key = await t.issueKey('enterprise', { requestsPerMinute: 100_000, requestsPerDay: 10_000_000 });
    const send = (i: number) => t.api.get('/v1/pets?limit=1').set('Authorization', key).set('Content-Type', `application/json; x=${i}`).expect(200);
    for (let i = 0; i < 50; i++) await send(i); // warm-up
    const before = heapAfterGcMb();
    for (let i = 50; i < 650; i++) await send(i);
    // Unnormalised, each value kept about 17 KB (10 MB here) and compiled a schema.
    expect(heapAfterGcMb() - before).toBeLessThan(3);
  });

  it('415 for a body that is not application/json; nothing is stored', async () => {
    const res = await t.api.post('/v1/pets').set('Authorization', t.auth).set('Content-Type', 'text/plain').send('name=Rex');
    expectErrorObject(res, 415, 'unsupported_media_type');
    expect(res.body.message).toBe('Content-Type must be application/json, got text/plain');
    const form = await t.api.post('/v1/pets').set('Authorization', t.auth).type('form').send({ name: 'Rex', categoryId: 1 });
    expectErrorObject(form, 415, 'unsupported_media_type');
    expect(await t.storage.pets.list({ limit: 10 })).toEqual([]);
  });

  it('400 for malformed JSON', async () => {
    const res = await t.api.post('/v1/pets').set('Authorization', t.auth).set('Content-Type', 'application/json').send('{"name":');
    expectErrorObject(res, 400, 'invalid_request');
    expect(res.body.message).toBe('body is not valid JSON');
  });

  it('413 for a body over 1 MB', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1024 * 1024), categoryId: 1 });
    const res = await t.api.post('/v1/pets').set('Authorization', t.auth).set('Content-Type', 'application/json').send(body);
    expectErrorObject(res, 413, 'payload_too_large');
  });

  it('a body just under 1 MB reaches validation (400 for the long name, not 413)', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1000 * 1000), categoryId: 1 });
    const res = await t.api.post('/v1/pets').set('Authorization', t.auth).set('Content-Type', 'application/json').send(body);
    expectErrorObject(res, 400, 'invalid_request');
  });

  it('500 for a thrown bug: no stack or internals in the body, the error is logged', async () => {
    const broken: Handler<'listPets'> = async () => {
      throw new Error('secret internal detail at /srv/db.ts:42');
    };
    const app = (await startTestApp({ handlers: { ...handlers, listPets: broken } })) as TestApp;
    const res = await app.api.get('/v1/pets').set('Authorization', app.auth).expect(500);
    expectErrorObject(res, 500, 'internal_error');
    expect(res.text).not.toMatch(/secret|db\.ts|at /);
    expect(app.logs()).toContain('secret internal detail');
    await app.close();
  });

  it('500 (never a silent contract breach) when a handler returns a body the contract forbids', async () => {
    const wrong = (async () => ({ status: 200, body: [{ id: 'one', name: 'Rex' }] })) as unknown as Handler<'listPets'>;
    const app = await startTestApp({ handlers: { ...handlers, listPets: wrong }, settings: { validateResponses: true } });
    const res = await app.api.get('/v1/pets').set('Authorization', app.auth).expect(500);
    expectErrorObject(res, 500, 'internal_error');
    await app.close();
  });
});

describe('response writing', () => {
  it('the direct path (validation off, as in production) and the validated path send the same responses', async () => {
    const validated = await startTestApp({ databaseUrl: t.databaseUrl, settings: { validateResponses: true } });
    await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    for (const [url, status] of [
      ['/v1/pets', 200],
      ['/v1/pets/1', 200],
      ['/v1/pets/2', 404],
      ['/v1/store/orders', 501],
    ] as const) {
      const direct = await t.api.get(url).set('Authorization', t.auth).expect(status);
      const checked = await validated.api.get(url).set('Authorization', t.auth).expect(status);
      expect([url, direct.status, direct.text, direct.headers['content-type'], direct.headers['content-length']]).toEqual([
        url,
        checked.status,
        checked.text,
        checked.headers['content-type'],
        checked.headers['content-length'],
      ]);
    }
    await validated.close();
  });
});

/** The conformance check on a supertest response, as the test client runs it (no status expected). */
const assertConformsToSpec = (res: request.Response, expectedStatuses: number[] = []): void => {
  // supertest's response keeps node's request (typed by superagent without it).
  const { req } = res as unknown as { req: { method: string; path: string } };
  assertResponseConforms(
    { method: req.method, url: req.path, status: res.status, headers: res.headers, body: res.body, text: res.text },
    { expectedStatuses: new Set(expectedStatuses) },
  );
};

describe('the spec conformance check used by every test', () => {
  it('rejects a response that breaks the contract', async () => {
    const wrong = (async () => ({ status: 200, body: [{ id: 'one', name: 'Rex' }] })) as unknown as Handler<'listPets'>;
    const app = await startTestApp({ handlers: { ...handlers, listPets: wrong }, settings: { validateResponses: false } });
    const res = await request(app.app).get('/v1/pets').set('Authorization', app.auth);
    expect(res.status).toBe(200);
    expect(() => assertConformsToSpec(res)).toThrow(/breaks the contract.*must be integer/s);
    await app.close();
  });

  it('fails a 5xx the test does not expect, even an Error object the contract allows (default), and passes it when pinned', async () => {
    const broken: Handler<'listPets'> = async () => {
      throw new Error('bug');
    };
    const app = await startTestApp({ handlers: { ...handlers, listPets: broken } });
    const res = await request(app.app).get('/v1/pets').set('Authorization', app.auth).expect(500);
    expect(() => assertConformsToSpec(res)).toThrow(/GET \/v1\/pets -> 500: a server error the test does not expect/);
    expect(() => assertConformsToSpec(res, [500])).not.toThrow();
    await expect(
      app.api
        .get('/v1/pets')
        .set('Authorization', app.auth)
        .then(() => 'passed'),
    ).rejects.toThrow(/server error the test does not expect/);
    await app.api.get('/v1/pets').set('Authorization', app.auth).expect(500);
    await app.close();
  });

  it('matches paths as the server does (case, trailing slash), so such responses are checked too', async () => {
    const wrong = (async () => ({ status: 200, body: [{ id: 'one', name: 'Rex' }] })) as unknown as Handler<'listPets'>;
    const app = await startTestApp({ handlers: { ...handlers, listPets: wrong } });
    for (const url of ['/V1/PETS', '/v1/pets/']) {
      const res = await request(app.app).get(url).set('Authorization', app.auth).expect(200);
      expect(() => assertConformsToSpec(res)).toThrow(/breaks the contract.*must be integer/s);
    }
    await app.close();
  });

  it('fails a success for a request the contract does not declare, outside the public routes', () => {
    const observed = { method: 'GET', url: '/v1/kittens', status: 200, headers: { 'content-type': 'application/json' }, body: [], text: '[]' };
    expect(() => assertResponseConforms(observed)).toThrow(/a success for a request the contract does not declare/);
    expect(() => assertResponseConforms({ ...observed, method: 'HEAD', url: '/v1/pets' })).toThrow(/a success for a request the contract does not declare/);
    expect(() => assertResponseConforms({ ...observed, url: '/healthz', body: { status: 'ok' } })).not.toThrow();
  });

  it('rejects an error that is not an Error object', async () => {
    const app: Express = express();
    app.get('/nowhere', (_req, res) => {
      res.status(404).json({ error: 'nope' });
    });
    const res = await request(app).get('/nowhere');
    expect(() => assertConformsToSpec(res)).toThrow(/must have required property/);
  });
});

describe('int64 format: only JavaScript-safe integers', () => {
  it('the format itself', () => {
    expect(int64Format.validate(2 ** 53 - 1)).toBe(true);
    expect(int64Format.validate(-(2 ** 53 - 1))).toBe(true);
    expect(int64Format.validate(2 ** 53)).toBe(false);
    expect(int64Format.validate(2 ** 63)).toBe(false);
    expect(int64Format.validate(1e20)).toBe(false);
  });

  it('is registered with the request checks (a bare int64 with no maximum refuses 2^63 and 1e20)', async () => {
    const spec = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      servers: [{ url: '/' }],
      paths: {
        '/n/{n}': {
          get: {
            operationId: 'n',
            parameters: [{ name: 'n', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
            responses: { '204': { description: 'ok' } },
          },
        },
      },
    };
    const custom = await startTestApp({ versions: [{ name: 'v1', contract: spec, handlers: { n: async () => ({ status: 204 }) } }] });
    try {
      await custom.api.get('/v1/n/9007199254740991').expect(204);
      for (const value of ['9223372036854775808', '100000000000000000000', '9007199254740992']) {
        const res = await custom.api.get(`/v1/n/${value}`).expect(400);
        expect(res.body.message).toBe('params.n must match format "int64"');
      }
    } finally {
      await custom.close();
    }
  });
});
