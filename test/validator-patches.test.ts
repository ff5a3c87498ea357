/**
 * The patches of express-openapi-validator (patches/, applied by
 * patch-package on every npm install): each case here fails on the package as
 * published. The validator is driven directly, through its public middleware,
 * as its README shows, so the test speaks of the library and nothing else.
 */
import express, { type ErrorRequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import * as pathToRegexp from 'path-to-regexp';
import url from 'node:url';
import AjvCore from 'ajv/dist/core';
import request from 'supertest';

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'patches', version: '1.0.0' },
  servers: [{ url: '/v1' }],
  components: { schemas: { Id: { type: 'integer', minimum: 1 } } },
  paths: {
    '/tags': {
      get: {
        // No `style`: a header parameter's default is `simple` (comma-separated), whatever its schema.
        parameters: [
          { name: 'X-Tags', in: 'header', required: true, schema: { type: 'array', items: { type: 'string' }, maxItems: 3 } },
          { name: 'q', in: 'query', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/filtered': {
      get: {
        // A JSON header: its value is JSON text, parsed before its schema is checked.
        parameters: [
          { name: 'X-Filter', in: 'header', required: true, content: { 'application/json': { schema: { type: 'array', items: { type: 'integer' } } } } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/owners/{ownerId}': {
      get: {
        // A parameter whose schema is a $ref: resolved through Ajv.
        parameters: [{ name: 'ownerId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/pets/{petId}': {
      get: {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

function app(): express.Express {
  const served = express();
  served.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(DOCUMENT) as never,
      validateRequests: { coerceTypes: true },
      validateResponses: false,
      validateApiSpec: false,
    }),
  );
  served.get('/v1/tags', (_req, res) => void res.json({ ok: true }));
  served.get('/v1/filtered', (_req, res) => void res.json({ ok: true }));
  served.get('/v1/owners/:ownerId', (_req, res) => void res.json({ ok: true }));
  served.get('/v1/pets/:petId', (_req, res) => void res.json({ ok: true }));
  const errors: ErrorRequestHandler = (error: { status?: number; message: string }, _req, res, _next) =>
    void res.status(error.status ?? 500).json({ message: error.message });
  served.use(errors);
  return served;
}

/** A request as the validator reads it from Express, for a chain driven directly. */
interface DirectRequest {
  method: string;
  url: string;
  originalUrl: string;
  path: string;
  baseUrl: string;
  app: express.Express;
  headers: Record<string, string>;
  query: Record<string, string>;
  params: Record<string, string>;
  body: undefined;
}

/**
 * The validator's middleware chain driven directly, the way a router runs
 * it, so only the validator's own work falls inside a spy: `run` settles
 * with the error the chain passed on, if any (in the same turn once the
 * document is loaded).
 */
function directChain(): {
  requestFor(path: string, query?: Record<string, string>, headers?: Record<string, string>): DirectRequest;
  run(req: DirectRequest): Promise<unknown>;
} {
  const middlewares = OpenApiValidator.middleware({
    apiSpec: structuredClone(DOCUMENT) as never,
    validateRequests: true,
    validateResponses: false,
    validateApiSpec: false,
  }) as unknown as Array<(req: unknown, res: unknown, next: (error?: unknown) => void) => unknown>;
  const served = express();
  return {
    requestFor(path, query = {}, headers = {}) {
      const target = Object.keys(query).length === 0 ? path : `${path}?${new URLSearchParams(query)}`;
      return { method: 'GET', url: target, originalUrl: target, path, baseUrl: '', app: served, headers, query, params: {}, body: undefined };
    },
    run: (req) =>
      new Promise((resolve) => {
        const step = (index: number, error?: unknown): void => {
          if (error || index === middlewares.length) resolve(error);
          else void middlewares[index]!(req, {}, (failure?: unknown) => step(index + 1, failure));
        };
        step(0);
      }),
  };
}

describe('express-openapi-validator, as patched', () => {
  it('a header parameter without `style` is `simple`: X-Tags: a,b is an array of two, as OpenAPI defines the default for headers', async () => {
    const served = app();
    await request(served).get('/v1/tags').set('X-Tags', 'a,b').expect(200);
    // The array is what its schema checks: a fourth item is over maxItems.
    const refused = await request(served).get('/v1/tags').set('X-Tags', 'a,b,c,d').expect(400);
    expect(refused.body.message).toMatch(/must NOT have more than 3 items/);
  });

  it('a header parameter with JSON `content` is parsed as JSON before its schema is checked (it was never parsed: always 400)', async () => {
    const served = app();
    await request(served).get('/v1/filtered').set('X-Filter', '[1,2]').expect(200);
    const refused = await request(served).get('/v1/filtered').set('X-Filter', '["one"]').expect(400);
    expect(refused.body.message).toMatch(/must be integer/);
  });

  it('once its document is loaded, the validator passes a request on in the same turn, not a promise turn later per middleware', async () => {
    const served = express();
    // Marks the request while the rest of the chain runs synchronously inside this next().
    served.use((req, _res, next) => {
      (req as { sameTurn?: boolean }).sameTurn = true;
      next();
      (req as { sameTurn?: boolean }).sameTurn = false;
    });
    served.use(
      OpenApiValidator.middleware({ apiSpec: structuredClone(DOCUMENT) as never, validateRequests: true, validateResponses: false, validateApiSpec: false }),
    );
    served.get('/v1/pets/:petId', (req, res) => void res.json({ sameTurn: (req as { sameTurn?: boolean }).sameTurn }));
    await request(served).get('/v1/pets/1').expect(200); // the document loads
    expect((await request(served).get('/v1/pets/2').expect(200)).body).toEqual({ sameTurn: true });
  });

  it('route lookup reads the routing options once per request, not once per route it scans', async () => {
    const served = app();
    await request(served).get('/v1/pets/1').expect(200);
    const enabled = jest.spyOn(served, 'enabled');
    try {
      await request(served).get('/v1/pets/2').expect(200);
      expect(enabled.mock.calls.filter(([setting]) => setting === 'strict routing')).toHaveLength(1);
    } finally {
      enabled.mockRestore();
    }
  });

  it('the query string is found without parsing the whole URL with url.parse on every request', async () => {
    const served = app();
    await request(served).get('/v1/tags?q=1').set('X-Tags', 'a').expect(200);
    const parse = jest.spyOn(url, 'parse');
    try {
      await request(served).get('/v1/tags?q=2').set('X-Tags', 'a').expect(200);
      // The client (superagent) parses its own absolute URL; the server side sees the request target, `/v1/tags?q=2`.
      expect(parse.mock.calls.filter(([target]) => String(target).startsWith('/'))).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it("a parameter's name and schema are resolved once, not through Ajv's getSchema on every request", async () => {
    const served = app();
    await request(served).get('/v1/owners/1').expect(200);
    await request(served).get('/v1/owners/0').expect(400); // the $ref schema is the one checked
    const getSchema = jest.spyOn(AjvCore.prototype, 'getSchema');
    try {
      await request(served).get('/v1/owners/2').expect(200);
      expect(getSchema).not.toHaveBeenCalled();
    } finally {
      getSchema.mockRestore();
    }
  });

  it('route matchers are compiled once, not on every request (upstream PR #1217)', async () => {
    const served = app();
    // Warm: the validator loads its document and compiles what the first requests need.
    await request(served).get('/v1/pets/1').expect(200);
    const compile = jest.spyOn(pathToRegexp, 'pathToRegexp');
    try {
      for (let id = 2; id < 52; id++) await request(served).get(`/v1/pets/${id}`).expect(200);
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });

  it("whether a query parameter's schema is an object (or a combination holding one) is found once per schema, not on every request", async () => {
    const { requestFor, run } = directChain();
    const tags = (q: string) => requestFor('/v1/tags', { q }, { 'x-tags': 'a,b' });
    expect(await run(tags('first'))).toBeUndefined();
    // Each answer was `[].concat(allOf, oneOf, anyOf).some(...)` over the schema, per parameter, per request.
    const concat = jest.spyOn(Array.prototype, 'concat');
    try {
      expect(await run(tags('second'))).toBeUndefined();
      expect(concat).not.toHaveBeenCalled();
    } finally {
      concat.mockRestore();
    }
  });

  it('a request without a query string or Content-Type is checked without splitting its URL, parsing a media type, scanning for bracketed query names or redefining a writable query', async () => {
    const { requestFor, run } = directChain();
    const pet = (id: number) => requestFor(`/v1/pets/${id}`);
    expect(await run(pet(1))).toBeUndefined(); // loads the document and builds the operation's checks
    expect(await run(pet(-1.5))).toBeDefined(); // the path parameter is checked
    const second = pet(2); // built before the spies, which count the validator's work only
    const split = jest.spyOn(String.prototype, 'split');
    const keys = jest.spyOn(Object, 'keys');
    const define = jest.spyOn(Object, 'defineProperty');
    try {
      let outcome: unknown = 'pending';
      void run(second).then((error) => (outcome = error));
      const calls = {
        split: split.mock.calls.length,
        keys: keys.mock.calls.length,
        // The request's `query` is a writable property of its own: the Express 5 workaround has nothing to redefine.
        queryRedefined: define.mock.calls.filter(([, name]) => name === 'query').length,
      };
      await Promise.resolve();
      expect(outcome).toBeUndefined(); // settled in the same turn
      // Two Object.keys: the request's path parameters, and its query names (refused when unknown). None for bracketed
      // names nor for a media type's parameters.
      expect(calls).toEqual({ split: 0, keys: 2, queryRedefined: 0 });
    } finally {
      split.mockRestore();
      keys.mockRestore();
      define.mockRestore();
    }
  });
});
