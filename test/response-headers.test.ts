/**
 * The response head (packages/engine/src/context/response-headers.ts): the headers
 * the phases set are recorded in the request's context and written with the
 * status in one `writeHead`, each exactly once, on every kind of answer; the
 * engine's own answers leave Node no per-response header dictionary (what
 * made the head cost more than the rest of a small answer).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ResponseHeaders } from '@spec-first/engine/testing';
import { startTestApp, type TestApp } from './support/test-app';

let t: TestApp;
let server: http.Server;
/** A stored pet's path. */
let petPath: string;
/** The names Node filed in its own header dictionary, per finished response, by path. */
const filed = new Map<string, string[]>();

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
  petPath = `/v1/pets/${(created.body as { id: number }).id}`;
  server = http.createServer((req, res) => {
    res.once('finish', () => filed.set(req.url!, res.getHeaderNames()));
    t.app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const base = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** The header names of a response as they came on the wire, lower-cased, repeats kept. */
const namesOnTheWire = (response: request.Response): string[] =>
  ((response as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders ?? []).filter((_, at) => at % 2 === 0).map((name) => name.toLowerCase());

const repeated = (names: string[]): string[] => names.filter((name, at) => names.indexOf(name) !== at);

describe('the response head', () => {
  it.each([
    ['a handler answer', 'the pet', 200, true],
    ['an Error object of the handler (404)', '/v1/pets/999999', 404, true],
    ['an Error object of a phase (400)', '/v1/pets?limit=0', 400, true],
    ['a refusal before the contract (401)', '/v1/pets?nokey', 401, false],
  ])('%s: every header once, written without a header dictionary', async (_, where, status, withKey) => {
    const path = where === 'the pet' ? petPath : where;
    const call = request(base()).get(path);
    const response = await (withKey ? call.set('Authorization', t.auth) : call).expect(status);
    const names = namesOnTheWire(response);
    expect(repeated(names)).toEqual([]);
    for (const name of ['x-request-id', 'content-security-policy', 'x-content-type-options', 'content-type', 'content-length']) expect(names).toContain(name);
    if (status !== 401) for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'ratelimit-policy', 'ratelimit']) expect(names).toContain(name);
    if (path === petPath) for (const name of ['deprecation', 'sunset', 'link']) expect(names).toContain(name);
    expect(filed.get(path)).toEqual([]);
  });

  it('an answer Express writes itself (health) carries the recorded headers too, once, with its own', async () => {
    const response = await request(base()).get('/healthz').expect(200);
    const names = namesOnTheWire(response);
    expect(repeated(names)).toEqual([]);
    for (const name of ['x-request-id', 'content-security-policy', 'content-type']) expect(names).toContain(name);
  });

  it('the access log reads the length of the body sent from the record', async () => {
    const response = await request(base()).get(petPath).set('Authorization', t.auth).set('X-Request-Id', 'head-length-1').expect(200);
    const line = t
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as { requestId?: string; responseBytes?: number })
      .find((entry) => entry.requestId === 'head-length-1');
    expect(line?.responseBytes).toBe(Number(response.headers['content-length']));
  });
});

describe('ResponseHeaders', () => {
  it('keeps one value per name, in any case: a later one replaces the earlier, in its place', () => {
    const headers = new ResponseHeaders();
    headers.set('Content-Type', 'text/plain');
    headers.set('X-Request-Id', 'a');
    headers.set('content-type', 'application/json');
    expect(headers.list).toEqual(['content-type', 'application/json', 'X-Request-Id', 'a']);
    expect(headers.get('CONTENT-TYPE')).toBe('application/json');
    expect(headers.has('x-request-id')).toBe(true);
    expect(headers.toObject()).toEqual({ 'content-type': 'application/json', 'x-request-id': 'a' });
  });
});
