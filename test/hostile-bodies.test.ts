/**
 * Hostile request bodies and parameters, on a purpose-written document served
 * through the composition root (as v1), over a real socket: names that would
 * build huge arrays or reach an object's prototype, arrays longer than the
 * contract allows, and Content-Types invented per request. Each case fails
 * without its guard (docs/operations.md, "Hostile clients").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import AjvCore from 'ajv/dist/core';
import type { OpenApiDocument } from '@spec-first/engine';
import { startTestApp, type TestApp } from './support/test-app';

const echoed = {
  '200': { description: 'what the handler received', content: { 'application/json': { schema: { type: 'object' } } } },
  default: { description: 'error' },
};

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'hostile bodies', version: '1.0.0' },
  security: [],
  paths: {
    '/notes': {
      post: {
        operationId: 'postNote',
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: { type: 'object', properties: { note: { type: 'string' }, tags: { type: 'array', items: { type: 'string' }, maxItems: 5 } } },
            },
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', properties: { note: { type: 'string' }, tags: { type: 'array', items: { type: 'string' }, maxItems: 5 } } },
            },
          },
        },
        responses: echoed,
      },
    },
    '/search': {
      get: {
        operationId: 'search',
        parameters: [
          { name: 'filter', in: 'query', style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } } },
          { name: 'ids', in: 'query', style: 'form', explode: false, schema: { type: 'array', items: { type: 'integer' } } },
          { name: 'colors', in: 'query', style: 'form', explode: true, schema: { type: 'array', items: { type: 'string' }, maxItems: 3 } },
          { name: 'prefs', in: 'cookie', style: 'form', explode: false, schema: { type: 'object', additionalProperties: { type: 'string' } } },
        ],
        responses: echoed,
      },
    },
    '/optional': {
      post: {
        operationId: 'postOptional',
        // `required` left out: the body is optional (OpenAPI's default).
        requestBody: {
          content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
        },
        responses: echoed,
      },
    },
    '/text': {
      post: {
        operationId: 'postText',
        requestBody: { required: true, content: { 'text/*': { schema: { type: 'string', maxLength: 10 } } } },
        responses: echoed,
      },
    },
  },
} as unknown as OpenApiDocument;

/** What the handler received, in a form JSON carries: own keys, and whether anything reached the prototype. */
const describeObject = (value: unknown): unknown => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return {
    ownKeys: Object.keys(value),
    values: Object.fromEntries(Object.entries(value).map(([key, item]) => [key, describeObject(item)])),
    plainPrototype: Object.getPrototypeOf(value) === Object.prototype,
    isAdmin: (value as { isAdmin?: unknown }).isAdmin ?? null,
  };
};

let t: TestApp;
let server: http.Server;
let base: string;
beforeAll(async () => {
  t = await startTestApp({
    // Anonymous operations count per address: a window this suite never meets.
    rateLimits: { ipPerMinute: 100_000 },
    versions: [
      {
        name: 'v1',
        contract: DOCUMENT,
        handlers: {
          postNote: async (input: { body: unknown }) => ({ status: 200, body: { body: describeObject(input.body) } }),
          search: async (input: { query: unknown; cookies: unknown }) => ({
            status: 200,
            body: { query: describeObject(input.query), cookies: describeObject(input.cookies) },
          }),
          postText: async (input: { mediaType: string; body: unknown }) => ({ status: 200, body: { mediaType: input.mediaType, body: input.body } }),
          postOptional: async (input: { body: unknown }) => ({ status: 200, body: { body: input.body ?? null } }),
        } as never,
      },
    ],
  });
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** A request over a fresh connection, timed from its first byte to the end of its answer. */
async function timed(path: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ms: performance.now() - started };
}

function multipart(fields: Array<[string, string]>): { body: string; headers: Record<string, string> } {
  const boundary = 'hostile-boundary';
  const parts = fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return { body: `${parts.join('')}--${boundary}--\r\n`, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } };
}

describe('multipart field names cannot make the server build huge arrays', () => {
  it('tags[50000000] is a 400 at once, and another request is answered within 100 ms meanwhile', async () => {
    // Warm: the first requests of an app compile what they use.
    await timed('/v1/notes', {
      method: 'POST',
      ...multipart([
        ['note', 'warm'],
        ['tags[0]', 'a'],
      ]),
    });
    await timed('/healthz');
    const { body, headers } = multipart([
      ['note', 'hi'],
      ['tags[50000000]', 'x'],
    ]);
    // The best of three attacks, each with a probe beside it: without the limit every one of them blocks the server for seconds.
    const probes: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const [refused, answered] = await Promise.all([timed('/v1/notes', { method: 'POST', headers, body }), timed('/healthz')]);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        code: 'invalid_request',
        status: 400,
        message: 'multipart body: the field name "tags[50000000]" has an array index above 99',
      });
      expect(answered.status).toBe(200);
      probes.push(Math.max(answered.ms, refused.ms));
    }
    expect(Math.min(...probes)).toBeLessThan(100);
  });

  it('field names nested deeper than two levels are a 400 naming the field', async () => {
    const { body, headers } = multipart([['a[b][c][d]', 'x']]);
    const refused = await timed('/v1/notes', { method: 'POST', headers, body });
    expect(refused).toMatchObject({ status: 400, body: { message: 'multipart body: the field name "a[b][c][d]" nests more than 2 levels of brackets' } });
  });

  it("an array longer than the schema's maxItems is refused by its length (sent by index, by repetition, or in a form)", async () => {
    const byIndex = multipart([['tags[7]', 'x']]);
    expect(await timed('/v1/notes', { method: 'POST', ...byIndex })).toMatchObject({
      status: 400,
      body: { message: 'body.tags must NOT have more than 5 items' },
    });
    const repeated = multipart(Array.from({ length: 6 }, (_, i): [string, string] => ['tags', `t${i}`]));
    expect(await timed('/v1/notes', { method: 'POST', ...repeated })).toMatchObject({
      status: 400,
      body: { message: 'body.tags must NOT have more than 5 items' },
    });
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    expect(await timed('/v1/notes', { method: 'POST', headers: form, body: 'tags=a&tags=b&tags=c&tags=d&tags=e&tags=f' })).toMatchObject({
      status: 400,
      body: { message: 'body.tags must NOT have more than 5 items' },
    });
    expect(await timed('/v1/notes', { method: 'POST', headers: form, body: 'tags=a&tags=b' })).toMatchObject({ status: 200 });
  });
});

describe('names sent by a client are plain keys, never an object prototype', () => {
  it('a multipart field __proto__[isAdmin] is an own key of the body; nothing reaches its prototype', async () => {
    const { body, headers } = multipart([
      ['note', 'hi'],
      ['__proto__[isAdmin]', 'true'],
    ]);
    const answer = await timed('/v1/notes', { method: 'POST', headers, body });
    expect(answer.status).toBe(200);
    // Written as JSON: in an object literal, `__proto__:` would set the expectation's own prototype.
    expect(answer.body['body']).toEqual(
      JSON.parse(
        '{"ownKeys":["note","__proto__"],"values":{"note":"hi","__proto__":{"ownKeys":["isAdmin"],"values":{"isAdmin":"true"},"plainPrototype":false,"isAdmin":"true"}},"plainPrototype":true,"isAdmin":null}',
      ),
    );
  });

  it('a form field __proto__ is an own key too', async () => {
    const answer = await timed('/v1/notes', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'note=hi&__proto__=x' });
    expect(answer.status).toBe(200);
    expect(answer.body['body']).toMatchObject({ ownKeys: ['note', '__proto__'], plainPrototype: true, isAdmin: null });
  });

  it('deepObject keys __proto__, constructor and toString are plain keys, not 400s', async () => {
    const answer = await timed('/v1/search?filter[__proto__]=a&filter[constructor]=b&filter[toString]=c');
    expect(answer.status).toBe(200);
    expect(answer.body['query']).toMatchObject({
      values: {
        filter: {
          ownKeys: ['__proto__', 'constructor', 'toString'],
          values: JSON.parse('{"__proto__":"a","constructor":"b","toString":"c"}'),
          plainPrototype: true,
          isAdmin: null,
        },
      },
    });
    // Given twice, a key is still refused as before.
    expect(await timed('/v1/search?filter[constructor]=b&filter[constructor]=c')).toMatchObject({
      status: 400,
      body: { message: 'query.filter[constructor] must be given at most once' },
    });
  });

  it('cookie objects keep __proto__ and constructor as plain keys', async () => {
    const answer = await timed('/v1/search', { headers: { Cookie: 'prefs=__proto__,a,constructor,b' } });
    expect(answer.status).toBe(200);
    expect(answer.body['cookies']).toMatchObject({ values: { prefs: { ownKeys: ['__proto__', 'constructor'], plainPrototype: true, isAdmin: null } } });
  });
});

describe('arrays in parameters are bounded by maxItems, or by the server cap', () => {
  it("maxItems: 3 refuses a fourth value before it is read; no maxItems: the server's cap of 1000", async () => {
    expect(await timed('/v1/search?colors=a&colors=b&colors=c&colors=d')).toMatchObject({
      status: 400,
      body: { message: 'query.colors must NOT have more than 3 items' },
    });
    const ids = (count: number) => Array.from({ length: count }, (_, i) => i % 10).join(',');
    expect(await timed(`/v1/search?ids=${ids(1000)}`)).toMatchObject({ status: 200 });
    expect(await timed(`/v1/search?ids=${ids(1001)}`)).toMatchObject({
      status: 400,
      body: { message: "query.ids must NOT have more than 1000 items (the server's cap for an array whose schema sets no lower maxItems)" },
    });
  });
});

describe("the validator's caches do not grow with the Content-Types clients invent", () => {
  it('an optional body left out passes, with or without a Content-Type (strict mode runs the validator for every request)', async () => {
    const strict = await startTestApp({
      rateLimits: { ipPerMinute: 100_000 },
      settings: { validateResponses: true },
      versions: [{ name: 'v1', contract: DOCUMENT, handlers: { postOptional: async () => ({ status: 200, body: { body: null } }) } as never }],
    });
    try {
      await strict.api.post('/v1/optional').expect(200);
      await strict.api.post('/v1/optional').set('Content-Type', 'application/x-www-form-urlencoded').expect(200);
      await strict.api.post('/v1/optional').set('Content-Type', 'text/x-anything').expect(200);
      expect((await strict.api.post('/v1/optional').type('form').send('other=1').expect(400)).body.message).toMatch(/name/);
    } finally {
      await strict.close();
    }
  });

  it('300 distinct text/xN bodies for a declared text/* compile no schema each', async () => {
    // The validator keeps one compiled schema per Ajv key (method, path, Content-Type), added with addSchema.
    const compile = jest.spyOn(AjvCore.prototype, 'addSchema');
    try {
      // The first request compiles what the operation needs once.
      expect(await timed('/v1/text', { method: 'POST', headers: { 'Content-Type': 'text/x-first' }, body: 'hello' })).toMatchObject({
        status: 200,
        body: { mediaType: 'text/*', body: 'hello' },
      });
      const once = compile.mock.calls.length;
      for (let i = 0; i < 300; i++) {
        const answer = await timed('/v1/text', {
          method: 'POST',
          headers: { 'Content-Type': `text/x${i}; q=${i}` },
          body: i % 2 ? 'ok' : 'far too long for it',
        });
        expect(answer.status).toBe(i % 2 ? 200 : 400);
      }
      expect(compile.mock.calls.length - once).toBeLessThan(5);
    } finally {
      compile.mockRestore();
    }
  });
});
