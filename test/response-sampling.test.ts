import express from 'express';
import request from 'supertest';
import { handlers } from '../src/service/handlers';
import type { Handler } from '../src/service/handlers';
import { ApiError } from '@spec-first/engine';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/observability';
import { responseSampler } from '@spec-first/engine/testing';
import { asMiddleware } from '@spec-first/engine/testing';
import { startTestApp, type TestApp, type TestAppOptions } from './support/test-app';
import { memoryLog } from './support/memory-log';
import { samples, sampleValue } from './support/prometheus';

/** What the listPets handler below answers (undefined: the real handler's answer), switched by each test. */
let answer: Awaited<ReturnType<Handler<'listPets'>>> | 'throw-unknown-code' | undefined;
const listPets = (async (...args: Parameters<Handler<'listPets'>>) => {
  if (answer === 'throw-unknown-code') throw new ApiError(404, 'no_such_code' as never, 'an Error object with a code the contract does not list');
  return answer ?? handlers.listPets(...args);
}) as Handler<'listPets'>;

/** A pet without its required categoryId and status: the drift the contract forbids. */
const DRIFTED = { status: 200, body: [{ id: 1, name: 'Rex' }] } as unknown as typeof answer;

let clock: number;
let t: TestApp;
const start = (options: TestAppOptions = {}): Promise<TestApp> =>
  startTestApp({
    handlers: { ...handlers, listPets },
    now: () => clock,
    ...options,
    settings: { validateResponses: false, responseSampleRate: 1, ...options.settings },
  });

beforeEach(() => {
  answer = undefined;
  clock = Date.parse('2030-01-01T00:00:00Z');
});
afterEach(() => t?.close());

const violations = async (operation: string, kind: string): Promise<number | undefined> =>
  (await t.metrics.contractViolations.get()).values.find((value) => value.labels.operation === operation && value.labels.kind === kind)?.value;

/** The checks run after the response, off the request path: wait for the count, not a guessed delay. */
async function countReaches(operation: string, kind: string, expected: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await violations(operation, kind)) !== expected) {
    if (Date.now() > deadline)
      throw new Error(`pas_contract_violations_total{operation="${operation}",kind="${kind}"} is ${await violations(operation, kind)}, never ${expected}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs every check already scheduled (a `setImmediate` after the response finished) and those it schedules. */
const checksDone = async (): Promise<void> => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
};

const warnings = (): Array<Record<string, unknown>> =>
  t
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['msg'] === 'a sampled response breaks the contract');

const getPets = () => request(t.app).get('/v1/pets').set('Authorization', t.auth);

describe('responses checked against the contract after they are sent (VALIDATE_RESPONSES as a fraction)', () => {
  it('a drifted body reaches the client unchanged, is counted, and logged once a minute per operation and kind with its request id', async () => {
    t = await start();
    answer = DRIFTED;
    const first = await getPets().expect(200);
    expect(first.body).toEqual([{ id: 1, name: 'Rex' }]);
    await countReaches('listPets', 'body', 1);
    const scraped = samples((await request(t.app).get('/metrics').expect(200)).text);
    expect(sampleValue(scraped, 'pas_contract_violations_total', { operation: 'listPets', kind: 'body' })).toBe(1);
    expect(sampleValue(scraped, 'pas_contract_violations_total', { operation: 'getPet', kind: 'body' })).toBe(0);
    expect(warnings()).toEqual([
      expect.objectContaining({
        level: 40,
        requestId: first.headers['x-request-id'],
        operation: 'listPets',
        kind: 'body',
        status: 200,
        explanation: expect.stringMatching(/must have required property 'categoryId'/),
        suppressed: 0,
      }),
    ]);
    expect(JSON.stringify(warnings())).not.toContain('Rex'); // never the body

    // Within the minute: counted, not logged again.
    clock += 59_000;
    await getPets().expect(200);
    await countReaches('listPets', 'body', 2);
    expect(warnings()).toHaveLength(1);

    // Another kind of the same operation has a line of its own.
    answer = { status: 202, body: [] } as unknown as typeof answer;
    const undeclared = await getPets().expect(202);
    await countReaches('listPets', 'status', 1);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({
      requestId: undeclared.headers['x-request-id'],
      kind: 'status',
      status: 202,
      explanation: expect.stringMatching(/a 202 is not declared/),
    });

    // A minute after the first line: logged again, saying how many were counted meanwhile.
    clock += 1_000;
    answer = DRIFTED;
    const later = await getPets().expect(200);
    await countReaches('listPets', 'body', 3);
    expect(warnings()).toHaveLength(3);
    expect(warnings()[2]).toMatchObject({ requestId: later.headers['x-request-id'], kind: 'body', suppressed: 1 });
  });

  it('Error objects written by the error mapper are checked too', async () => {
    t = await start();
    answer = 'throw-unknown-code';
    const res = await getPets().expect(404);
    expect(res.body).toMatchObject({ code: 'no_such_code', status: 404 });
    await countReaches('listPets', 'body', 1);
    expect(warnings()[0]).toMatchObject({ requestId: res.headers['x-request-id'], status: 404, explanation: expect.stringMatching(/allowed values/) });
  });

  it('responses that keep the contract are no violations: successes, errors of handlers and of the framework, unknown routes', async () => {
    t = await start();
    await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/v1/pets/1').set('Authorization', t.auth).expect(200);
    await t.api.get('/v1/pets/2').set('Authorization', t.auth).expect(404);
    await t.api.get('/v1/pets/abc').set('Authorization', t.auth).expect(400);
    await t.api.get('/v1/pets').expect(401);
    await t.api.get('/v1/kittens').set('Authorization', t.auth).expect(404);
    await t.api.delete('/v1/pets').set('Authorization', t.auth).expect(405);
    await t.api.get('/v2/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/readyz').expect(200);
    await checksDone();
    const all = (await t.metrics.contractViolations.get()).values;
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((value) => value.value !== 0)).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  it.each([
    ['rate 0', { responseSampleRate: 0 }, 200],
    ['strict mode (rate 0)', { validateResponses: true, responseSampleRate: 0 }, 500],
  ])('%s: nothing is sampled, counted or logged', async (_name, settings, status) => {
    t = await start({ settings });
    answer = DRIFTED;
    await getPets().expect(status);
    await checksDone();
    expect((await t.metrics.contractViolations.get()).values).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  it('checks the share of responses the rate asks for: exactly the requests whose draw is below it', async () => {
    // A seeded generator (mulberry32): the same draws on every run.
    let seed = 42;
    const draws: number[] = [];
    const random = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      const draw = ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
      draws.push(draw);
      return draw;
    };
    t = await start({ random, settings: { responseSampleRate: 0.5 } });
    answer = DRIFTED;
    const requests = 200;
    const key = await t.issueKey('pro'); // a free key's minute ends first
    const drawsBefore = draws.length;
    for (let i = 0; i < requests; i++) await request(t.app).get('/v1/pets').set('Authorization', key).expect(200);
    const expected = draws.slice(drawsBefore, drawsBefore + requests).filter((draw) => draw < 0.5).length;
    expect(expected).toBeGreaterThan(60);
    expect(expected).toBeLessThan(140);
    await countReaches('listPets', 'body', expected);
  });
});

describe('the sampler', () => {
  it('a check that throws is logged: the response and the process are unaffected', async () => {
    const log = memoryLog();
    const app = express();
    const check = (): void => {
      throw new Error('the check broke');
    };
    app.use(asMiddleware(responseSampler({ rate: 1, check, logger: createLogger('info', log.sink) })));
    app.get('/x', (_req, res) => {
      res.json({ ok: true });
    });
    await request(app).get('/x').expect(200, { ok: true });
    await checksDone();
    expect(log.text()).toMatch(/"level":50.*the check broke.*the check of a sampled response failed/);
  });

  it('hands the check the status, headers and body as sent', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.use(asMiddleware(responseSampler({ rate: 1, check: (_req, sent) => seen.push(sent), logger: createLogger('silent') })));
    app.get('/x', (_req, res) => {
      res.status(201).set('X-Extra', '7').json({ ok: true, n: 1 });
    });
    await request(app).get('/x').expect(201);
    await checksDone();
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'GET',
        status: 201,
        headers: expect.objectContaining({ 'x-extra': '7' }),
        body: { ok: true, n: 1 },
        text: '{"ok":true,"n":1}',
      }),
    ]);
  });
});

describe('VALIDATE_RESPONSES', () => {
  it.each([
    [{}, true, 0],
    [{ NODE_ENV: 'test' }, true, 0],
    [{ NODE_ENV: 'production' }, false, 0.01],
    [{ NODE_ENV: 'production', VALIDATE_RESPONSES: 'true' }, true, 0],
    [{ VALIDATE_RESPONSES: 'false' }, false, 0],
    [{ VALIDATE_RESPONSES: '0' }, false, 0],
    [{ VALIDATE_RESPONSES: '1' }, false, 1],
    [{ VALIDATE_RESPONSES: '0.25' }, false, 0.25],
    [{ VALIDATE_RESPONSES: '.5' }, false, 0.5],
    [{ VALIDATE_RESPONSES: '1.0' }, false, 1],
  ])('%j: strict %s, sample rate %s', (env, strict, rate) => {
    const config = loadConfig(env);
    expect([config.validateResponses, config.responseSampleRate]).toEqual([strict, rate]);
  });

  it.each(['2', '1.5', '-0.1', 'abc', '50%', 'yes', 'TRUE', '1e-2', ' 0.1'])('refuses %j', (value) => {
    expect(() => loadConfig({ VALIDATE_RESPONSES: value })).toThrow(/VALIDATE_RESPONSES: must be true, false or a fraction from 0 to 1/);
  });
});
