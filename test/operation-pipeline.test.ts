/**
 * The compiled per-operation pipelines (packages/engine/src/pipeline/operation-pipeline.ts): a
 * request is matched once, as the validator would match it; and how the cost
 * ledger charges a profile's samples to the layers of a request.
 */
import { startTestApp, type TestApp } from './support/test-app';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';
import { handlers } from '../src/service/handlers';
import type { Handler } from '../src/service/handlers';
import { routeTable } from '@spec-first/engine/testing';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { LAYER_CODE, LAYERS, layerTimes, REST } from '../bench/cpu-profile';
import { PROJECT_ROOT } from './support/paths';

describe('matching a request to its operation', () => {
  let t: TestApp;
  beforeAll(async () => {
    const spec = loadSpec();
    // A static path next to a template it also matches, declaring another method.
    spec.paths['/pets/mine'] = { post: { ...objectAt(spec, 'paths', '/pets', 'post'), operationId: 'adoptMine' } };
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

  it("the route table matches in the validator's order: static segments first, the first matching path decides", async () => {
    const table = routeTable(t.service.documents[0]!.document, '/v1');
    const templates = table.paths.map((path) => path.template);
    // Every path of the contract, once.
    expect([...templates].sort()).toEqual(Object.keys(t.service.documents[0]!.document.paths ?? {}).sort());
    // The rule, for every pair: where two paths agree up to a segment that is static in one and a template in the other, the static one comes first.
    const segments = (template: string) => template.split('/').filter(Boolean);
    for (const [i, earlier] of templates.entries()) {
      for (const later of templates.slice(i + 1)) {
        const [a, b] = [segments(earlier), segments(later)];
        const differ = a.findIndex((segment, index) => segment !== b[index]);
        if (differ === -1 || differ >= b.length) continue;
        const templated = (segment: string) => segment.startsWith('{');
        expect({ earlier, later, staticAfterTemplate: templated(a[differ]!) && !templated(b[differ]!) }).toMatchObject({ staticAfterTemplate: false });
      }
    }
    expect(templates.indexOf('/pets/mine')).toBeLessThan(templates.indexOf('/pets/{petId}'));
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

  it("an undeclared method on a declared path is still the validator's 405, after authentication", async () => {
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
  it("keeps the operation's deprecation headers", async () => {
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
    const spec = loadSpec();
    objectAt(spec, 'paths', '/pets', 'get').security = [];
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
    const throwsNothing: Handler<'listPets'> = async () => {
      await Promise.resolve();
      throw undefined;
    };
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

describe("the cost ledger's attribution (bench/cpu-profile.ts)", () => {
  // A profile as V8 writes it: a tree of call frames, and samples naming the leaf that ran.
  const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0, columnNumber: 0, scriptId: '0' });
  const at = (file: string) =>
    file.startsWith('engine/') ? `file:///srv/app/packages/engine/dist/${file.slice('engine/'.length)}` : `file:///srv/app/dist/src/${file}`;
  const nodes = [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 8, 10] },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('(garbage collector)') },
    { id: 4, callFrame: frame('handle', 'file:///srv/app/node_modules/express/lib/application.js'), children: [5] },
    { id: 5, callFrame: frame('authenticate', at('engine/security/authenticate.js')), children: [6] },
    { id: 6, callFrame: frame('digest') }, // a builtin: charged to its caller
    { id: 7, callFrame: frame('writeUtf8String') },
    { id: 8, callFrame: frame('sendJson', at('engine/response/send-json.js')), children: [9, 11] },
    { id: 9, callFrame: frame('writeGeneric', 'node:net'), children: [7] },
    { id: 10, callFrame: frame('write', 'file:///srv/app/node_modules/sonic-boom/index.js') },
    { id: 11, callFrame: frame('stringify') },
  ];
  // One sample per node id listed, 10 µs apart.
  const sampled = [2, 3, 6, 5, 7, 11, 10, 10];
  const profile = { nodes, startTime: 0, endTime: 100, samples: sampled, timeDeltas: sampled.map(() => 10) };

  it('charges builtins to their caller, the socket to the rest, and leaves idle time out', () => {
    const { busyUs, byLayer } = layerTimes(profile, 0, 1_000);
    expect(busyUs).toBe(60); // 8 samples of 10 µs, less the idle one, less the last (its duration is unknown)
    expect(Object.fromEntries(byLayer)).toEqual({ [REST]: 20, authentication: 20, serialization: 10, 'access-log': 10 });
  });

  it('every layer it reports has code, and each src/ folder named there exists (engine/: the engine package)', () => {
    const source = (prefix: string): string =>
      prefix.startsWith('engine/') ? path.join(PROJECT_ROOT, 'packages/engine/src', prefix.slice('engine/'.length)) : path.join(PROJECT_ROOT, 'src', prefix);
    for (const { src } of LAYER_CODE) for (const prefix of src) expect(existsSync(source(prefix).replace(/\.js$/, '.ts'))).toBe(true);
    expect(new Set(LAYERS).size).toBe(LAYER_CODE.length);
  });
});
