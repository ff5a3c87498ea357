import type { Request, Response } from 'express';
import type request from 'supertest';
import { appOn, startTestApp, type TestApp } from './support/test-app';
import { handlers } from '../src/service/handlers';
import type { Handler } from '../src/service/handlers';
import type { Storage } from '../src/service/storage';
import { assignRequestId } from '@spec-first/engine/testing';
import { contextOf } from '@spec-first/engine';

let t: TestApp;
afterEach(() => t.close());

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A line of the JSON log, as these tests read it. */
interface LogLine {
  level: number;
  msg?: string;
  requestId?: string;
  [field: string]: unknown;
}
const lines = (logs: string): LogLine[] =>
  logs
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);
const accessLines = (logs: string) => lines(logs).filter((line) => line.msg === 'request');

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('X-Request-Id', () => {
  it('is on every kind of response, generated (UUID v4) and unique when the client sends none', async () => {
    // The window without a key holds /openapi.json, /docs/ and the 401; the next is the 429.
    t = await startTestApp({ rateLimits: { ipPerMinute: 3 } });
    const broken: Handler<'listPets'> = async () => {
      throw new Error('bug');
    };
    const brokenApp = await appOn(t.storage, { logLevel: 'silent', handlers: { ...handlers, listPets: broken } });
    const brokenApi = brokenApp.api;
    const databaseDown: Storage = {
      ...t.storage,
      pets: {
        list: () => Promise.reject(down()),
        create: () => Promise.reject(down()),
        get: () => Promise.reject(down()),
        createdBy: () => Promise.reject(down()),
        getVersioned: () => Promise.reject(down()),
        update: () => Promise.reject(down()),
      },
    };
    const downApp = await appOn(databaseDown, { logLevel: 'silent' });
    const downApi = downApp.api;
    const { api, auth } = t;
    const responses: Array<[number, request.Response]> = [
      [200, await api.get('/openapi.json')],
      [200, await api.get('/docs/')],
      [200, await api.get('/v1/pets').set('Authorization', auth)],
      [201, await api.post('/v1/pets').set('Authorization', auth).send({ name: 'Rex', categoryId: 1 })],
      [400, await api.get('/v1/pets?limit=1000').set('Authorization', auth)],
      [404, await api.get('/v1/pets/999').set('Authorization', auth)],
      [404, await api.get('/v1/kittens').set('Authorization', auth)],
      [404, await api.get('/nowhere')],
      [405, await api.delete('/v1/pets').set('Authorization', auth)],
      [
        413,
        await api
          .post('/v1/pets')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ name: 'x'.repeat(1_100_000) })),
      ],
      [415, await api.post('/v1/pets').set('Authorization', auth).set('Content-Type', 'text/plain').send('Rex')],
      [501, await api.get('/v1/store/orders').set('Authorization', auth).expect(501)],
      [401, await api.get('/v1/pets')],
      [429, await api.get('/v1/pets')],
      [500, await brokenApi.get('/v1/pets').set('Authorization', auth).expect(500)],
      [503, await downApi.get('/v1/pets').set('Authorization', auth).expect(503)],
      [200, await api.get('/healthz')],
      [200, await api.get('/readyz')],
      [200, await api.get('/metrics')],
    ];
    const ids = new Set<string>();
    for (const [status, res] of responses) {
      expect([status, res.status]).toEqual([status, status]);
      expect([status, res.headers['x-request-id']]).toEqual([status, expect.stringMatching(UUID_V4)]);
      ids.add(res.headers['x-request-id']!);
    }
    expect(ids.size).toBe(responses.length);
  });

  it('reuses a safe incoming id (1 to 128 printable ASCII characters)', async () => {
    t = await startTestApp();
    for (const id of ['abc-123', 'req_01HZX!~{}[]:;"\'<>?/\\|', 'x'.repeat(128)]) {
      const res = await t.api.get('/v1/pets').set('Authorization', t.auth).set('X-Request-Id', id).expect(200);
      expect(res.headers['x-request-id']).toBe(id);
    }
    const refused = await t.api.get('/v1/pets').set('X-Request-Id', 'from-client').expect(401);
    expect(refused.headers['x-request-id']).toBe('from-client');
  });

  it('replaces an unsafe one: too long, spaces, tabs, non-ASCII, empty', async () => {
    t = await startTestApp();
    for (const id of ['x'.repeat(129), 'two words', 'tab\there', 'caf\u00e9', '\u00ff\u00fe', '']) {
      const res = await t.api.get('/v1/pets').set('Authorization', t.auth).set('X-Request-Id', id).expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID_V4);
    }
  });

  it('replaces control characters and DEL (which an HTTP client library would not even send)', () => {
    for (const id of ['a\x01b', 'a\x7fb', 'a\x00', 'line\nbreak']) {
      const req = { headers: { 'x-request-id': id } } as unknown as Request;
      assignRequestId(req, {} as Response);
      expect(req.id).toMatch(UUID_V4);
      expect(contextOf(req).responseHeaders.get('X-Request-Id')).toBe(req.id);
    }
  });
});

describe('access log', () => {
  it('one line per request: id, method, operation, status, duration, size, key id and plan, client IP; never the key', async () => {
    t = await startTestApp();
    const ok = await t.api.get('/v1/pets?limit=5').set('Authorization', t.auth).set('X-Request-Id', 'trace-me-1').expect(200);
    const [keyRecord] = await t.storage.apiKeys.list();
    const logged = accessLines(t.logs());
    expect(logged).toHaveLength(1);
    expect(logged[0]).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      msg: 'request',
      requestId: 'trace-me-1',
      method: 'GET',
      path: '/v1/pets',
      operation: 'listPets',
      version: 'v1',
      status: 200,
      durationMs: expect.any(Number),
      responseBytes: Number(ok.headers['content-length']),
      keyId: keyRecord!.id,
      plan: 'free',
      ip: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(logged[0]!.durationMs).toBeGreaterThan(0);
    // A long path is cut.
    await t.api.get(`/${'a'.repeat(5000)}?q=secret-search`).expect(404);
    const long = accessLines(t.logs())[1]!;
    expect(long.path).toBe(`/${'a'.repeat(255)}…`);
    expect(t.logs()).not.toContain('secret-search');
    expect(logged[0]!.durationMs).toBeLessThan(10_000);
  });

  it('a failed auth logs its line without the key, the Authorization header or the body', async () => {
    t = await startTestApp();
    const secret = `pas_${'S'.repeat(43)}`;
    const res = await t.api.post('/v1/pets').set('Authorization', `Bearer ${secret}`).send({ name: 'SecretPetName', categoryId: 1 }).expect(401);
    const logs = t.logs();
    expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(/authorization/i);
    expect(logs).not.toContain('SecretPetName');
    const [line] = accessLines(logs);
    expect(line).toMatchObject({ requestId: res.headers['x-request-id'], method: 'POST', operation: 'createPet', status: 401 });
    expect(line!.keyId).toBeUndefined();
    expect(line!.plan).toBeUndefined();
  });

  it('a refusal says why in its access line (reason = the Error code, detail = its message), keyed by the request id; a success says nothing', async () => {
    t = await startTestApp();
    const limited = await t.issueKey('enterprise', { requestsPerMinute: 2, requestsPerDay: 1_000 });
    const sent: Array<[request.Response, string, RegExp]> = [
      [await t.api.get('/v1/pets?limit=1000').set('Authorization', t.auth).set('X-Request-Id', 'why-400'), 'invalid_request', /limit/],
      [
        await t.api
          .get('/v1/pets')
          .set('Authorization', `Bearer pas_${'x'.repeat(43)}`)
          .set('X-Request-Id', 'why-401'),
        'unauthorized',
        /invalid API key/,
      ],
      // A handler's own refusal (not thrown): read from its answer.
      [await t.api.get('/v1/pets/999').set('Authorization', t.auth).set('X-Request-Id', 'why-404'), 'not_found', /999/],
      [await t.api.delete('/v1/pets').set('Authorization', t.auth).set('X-Request-Id', 'why-405'), 'method_not_allowed', /GET/],
    ];
    await t.api.get('/v1/pets').set('Authorization', limited).expect(200);
    await t.api.get('/v1/pets').set('Authorization', limited).expect(200);
    sent.push([await t.api.get('/v1/pets').set('Authorization', limited).set('X-Request-Id', 'why-429'), 'rate_limited', /minute limit is 2 requests/]);
    const logged = new Map(accessLines(t.logs()).map((line) => [line.requestId as string, line]));
    for (const [res, reason, detail] of sent) {
      const line = logged.get(res.headers['x-request-id']!);
      expect(line).toMatchObject({ status: res.status, reason, detail: expect.stringMatching(detail) });
      expect(line!.detail).toBe(res.body.message);
    }
    // The plan of the refused key is on the same line: which window of which plan.
    expect(logged.get('why-429')).toMatchObject({ plan: 'enterprise', keyId: expect.any(Number) });
    const ok = [...logged.values()].find((line) => line.status === 200)!;
    expect(ok.reason).toBeUndefined();
    expect(ok.detail).toBeUndefined();
  });

  it('logs the client IP as resolved by TRUST_PROXY', async () => {
    t = await startTestApp({ settings: { trustProxy: 1 } });
    await t.api.get('/healthz').set('X-Forwarded-For', '203.0.113.9').expect(200);
    const untrusted = await startTestApp({ settings: { trustProxy: false } });
    await untrusted.api.get('/healthz').set('X-Forwarded-For', '203.0.113.9').expect(200);
    expect(accessLines(t.logs())[0]).toMatchObject({ operation: 'healthz', ip: '203.0.113.9' });
    expect(accessLines(untrusted.logs())[0]!.ip).not.toBe('203.0.113.9');
    await untrusted.close();
  });

  it('LOG_LEVEL=warn turns it off; errors are still logged', async () => {
    t = await startTestApp();
    const broken: Handler<'getPet'> = async () => {
      throw new Error('getPet bug');
    };
    const warnOnly = await appOn(t.storage, { logLevel: 'warn', handlers: { ...handlers, getPet: broken } });
    const { api } = warnOnly;
    const log = { text: warnOnly.logs };
    await api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    await api.get('/v1/pets/1').set('Authorization', t.auth).expect(500);
    expect(accessLines(log.text())).toEqual([]);
    // Lines about requests only (on a loaded machine, Redis may log about itself too).
    const about = lines(log.text()).filter((line) => line.requestId !== undefined);
    expect(about).toHaveLength(1);
    expect(about[0]).toMatchObject({ level: 50, operation: 'getPet' });
    await warnOnly.close();
  });
});

describe('errors', () => {
  it('a failure is logged once, with the request id, the operation and the stack; the access line has the same id', async () => {
    const broken: Handler<'getPet'> = async () => {
      throw new Error('secret internal detail');
    };
    t = await startTestApp({ handlers: { ...handlers, getPet: broken } });
    const res = await t.api.get('/v1/pets/7').set('Authorization', t.auth).set('X-Request-Id', 'incident-42').expect(500);
    expect(res.headers['x-request-id']).toBe('incident-42');
    // Lines about this request (on a loaded machine, Redis may log about itself too).
    const errors = lines(t.logs()).filter((line) => line.level >= 40 && line.requestId !== undefined);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      level: 50,
      requestId: 'incident-42',
      operation: 'getPet',
      method: 'GET',
      err: { type: 'Error', message: 'secret internal detail', stack: expect.stringContaining('\n    at ') },
    });
    expect(accessLines(t.logs())).toEqual([expect.objectContaining({ requestId: 'incident-42', status: 500, operation: 'getPet' })]);
  });

  it('a logged failure names the path, never the query string (it may carry secrets)', async () => {
    const broken: Handler<'listPets'> = async () => {
      throw new Error('broken list');
    };
    t = await startTestApp({ handlers: { ...handlers, listPets: broken } });
    await t.api.get('/v1/pets?limit=5&status=sold').set('Authorization', t.auth).expect(500);
    // The failure of this request (on a loaded machine, Redis may log about itself too).
    const failure = lines(t.logs()).find((line) => line.level === 50 && line.requestId !== undefined);
    expect(failure).toMatchObject({ path: '/v1/pets', operation: 'listPets' });
    expect(t.logs()).not.toContain('status=sold');
  });

  it('a failed readiness check is logged with the request id', async () => {
    t = await startTestApp();
    const storage: Storage = { ...t.storage, ping: () => Promise.reject(down()) };
    const unready = await appOn(storage, { settings: { accessLog: false } });
    await unready.api.get('/readyz').set('X-Request-Id', 'ready-1').expect(503);
    const log = { text: unready.logs };
    expect(lines(log.text()).filter((line) => line.requestId !== undefined)).toEqual([
      expect.objectContaining({ level: 40, requestId: 'ready-1', check: 'database', msg: 'readiness check failed' }),
    ]);
    await unready.close();
  });
});
