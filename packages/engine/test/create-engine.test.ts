/**
 * The door, driven as a user drives it: a document of its own (no store),
 * handlers, a credential check, and HTTP against the Express app it returns.
 * Every answer is judged by what the document says, not by the engine's code.
 */
import request from 'supertest';
import { ApiError, contextOf, createEngine, notImplementedHandler, type EngineOptions, type OpenApiDocument } from '../src/index';

const NOTES: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Notes', version: '1.0.0' },
  servers: [{ url: 'https://notes.example/api' }],
  security: [{ apiKey: [] }],
  paths: {
    '/notes': {
      get: {
        operationId: 'listNotes',
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 } }],
        responses: {
          '200': { description: 'notes', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Note' } } } } },
          default: { $ref: '#/components/responses/Error' },
        },
      },
      post: {
        operationId: 'createNote',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', additionalProperties: false, required: ['text'], properties: { text: { type: 'string', minLength: 1 } } },
            },
          },
        },
        responses: {
          '201': { description: 'created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Note' } } } },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    },
    '/notes/{noteId}': {
      get: {
        operationId: 'getNote',
        parameters: [{ name: 'noteId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
        responses: {
          '200': {
            description: 'one note',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Note' }, example: { id: 7, text: 'from the example' } } },
          },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    },
    '/about': {
      get: {
        operationId: 'about',
        security: [],
        responses: { '200': { description: 'who', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
  },
  components: {
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
    schemas: {
      Note: { type: 'object', required: ['id', 'text'], properties: { id: { type: 'integer', format: 'int64' }, text: { type: 'string' } } },
      Error: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
      },
    },
    responses: { Error: { description: 'an error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
  },
};

interface Member {
  readonly principal: string;
  readonly name: string;
}

const notes = [{ id: 1, text: 'first' }];
const handlers = {
  listNotes: async ({ query }: { query: { limit: number } }) => ({ status: 200, body: notes.slice(0, query.limit) }),
  createNote: async ({ body }: { body: { text: string } }, { caller }: { caller?: Member }) => ({
    status: 201,
    body: { id: notes.length + 1, text: `${body.text} (by ${caller?.name})` },
  }),
  getNote: notImplementedHandler('getNote'),
  about: async () => ({ status: 200, body: 'notes', mediaType: 'text/plain' }),
};

const options = (more: Partial<EngineOptions<Member>> = {}): EngineOptions<Member> => ({
  documents: [{ name: 'v1', document: NOTES, handlers }],
  credentials: {
    key: (key) => {
      if (key !== 'k1') throw new ApiError(401, 'unauthorized', 'unknown key');
      return { principal: 'member:1', name: 'Ada' };
    },
  },
  logger: { warn: () => undefined, error: () => undefined },
  ...more,
});

const isErrorObject = (body: unknown, status: number, code: string): void => {
  expect(body).toEqual({ code, message: expect.any(String), status });
};

describe('createEngine: a document of its own, served', () => {
  let app: Awaited<ReturnType<typeof createEngine>>['app'];
  beforeAll(async () => {
    ({ app } = await createEngine(options()));
  });

  it('serves an operation under /<name> with its handler, the credential where the document puts it', async () => {
    const res = await request(app).get('/v1/notes').set('X-Api-Key', 'k1').expect(200);
    expect(res.body).toEqual(notes);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives the handler the caller its credential check made (the user's own type)", async () => {
    const res = await request(app).post('/v1/notes').set('X-Api-Key', 'k1').send({ text: 'hello' }).expect(201);
    expect(res.body).toEqual({ id: 2, text: 'hello (by Ada)' });
  });

  it('refuses a request without the credential, or with one the check refuses: 401 Error objects', async () => {
    isErrorObject((await request(app).get('/v1/notes').expect(401)).body, 401, 'unauthorized');
    const refused = await request(app).get('/v1/notes').set('X-Api-Key', 'nope').expect(401);
    isErrorObject(refused.body, 401, 'unauthorized');
    expect(refused.body.message).toMatch(/unknown key/);
  });

  it('enforces the bounds, required fields and closed objects of the document: 400 Error objects', async () => {
    isErrorObject((await request(app).get('/v1/notes?limit=0').set('X-Api-Key', 'k1').expect(400)).body, 400, 'invalid_request');
    isErrorObject((await request(app).get('/v1/notes?limit=51').set('X-Api-Key', 'k1').expect(400)).body, 400, 'invalid_request');
    isErrorObject((await request(app).post('/v1/notes').set('X-Api-Key', 'k1').send({}).expect(400)).body, 400, 'invalid_request');
    isErrorObject((await request(app).post('/v1/notes').set('X-Api-Key', 'k1').send({ text: 'a', extra: 1 }).expect(400)).body, 400, 'invalid_request');
    isErrorObject((await request(app).get('/v1/notes/abc').set('X-Api-Key', 'k1').expect(400)).body, 400, 'invalid_request');
  });

  it('answers a stub 501 not_implemented, after its security', async () => {
    await request(app).get('/v1/notes/7').expect(401);
    isErrorObject((await request(app).get('/v1/notes/7').set('X-Api-Key', 'k1').expect(501)).body, 501, 'not_implemented');
  });

  it('serves an operation the document leaves open without a credential', async () => {
    expect((await request(app).get('/v1/about').expect(200)).text).toBe('notes');
  });

  it('answers unknown paths and methods with 404 and 405 Error objects', async () => {
    isErrorObject((await request(app).get('/nowhere').expect(404)).body, 404, 'not_found');
    isErrorObject((await request(app).get('/v1/nowhere').set('X-Api-Key', 'k1').expect(404)).body, 404, 'not_found');
    const res = await request(app).delete('/v1/notes').set('X-Api-Key', 'k1').expect(405);
    isErrorObject(res.body, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST, GET');
  });

  it('serves /healthz, the document as written, and /docs', async () => {
    expect((await request(app).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
    expect((await request(app).get('/openapi.json').expect(200)).body).toEqual(NOTES);
    expect((await request(app).get('/openapi/v1.json').expect(200)).body).toEqual(NOTES);
    expect((await request(app).get('/docs/').expect(200)).text).toMatch(/Notes reference/);
  });
});

describe('createEngine: the parts a user plugs in', () => {
  it('mock: a stub answers its example', async () => {
    const { app, stubbed } = await createEngine(options({ mock: true }));
    expect(stubbed).toEqual(['getNote']);
    expect((await request(app).get('/v1/notes/7').set('X-Api-Key', 'k1').expect(200)).body).toEqual({ id: 7, text: 'from the example' });
  });

  it('observe runs first for every request, and the rate limit once the caller is known', async () => {
    const seen: string[] = [];
    const { app } = await createEngine(
      options({
        observe: (req) => {
          seen.push(`observe ${req.id}`);
        },
        rateLimit: (req) => {
          const { caller } = contextOf<Member>(req);
          if (caller?.name === 'Ada') throw new ApiError<'rate_limited'>(429, 'rate_limited', 'slow down', { 'Retry-After': '1' });
        },
      }),
    );
    const res = await request(app).get('/v1/notes').set('X-Api-Key', 'k1').expect(429);
    isErrorObject(res.body, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBe('1');
    expect(seen).toEqual([`observe ${res.headers['x-request-id']}`]);
  });

  it('routes outside the documents are served and named by their path', async () => {
    const names: Array<string | undefined> = [];
    const { app } = await createEngine(
      options({
        observe: (req, res) => {
          res.once('finish', () => names.push(contextOf(req).operationName));
        },
        routes: { '/ready': (_req, res) => void res.json({ ready: true }) },
      }),
    );
    expect((await request(app).get('/ready').expect(200)).body).toEqual({ ready: true });
    await request(app).get('/v1/notes').set('X-Api-Key', 'k1').expect(200);
    expect(names).toEqual(['ready', 'listNotes']);
  });

  it('refuses at start, by name, what cannot be served', async () => {
    const broken = structuredClone(NOTES) as OpenApiDocument & { paths: { '/notes': { get: { security: unknown } } } };
    broken.paths['/notes'].get.security = [{ missing: [] }];
    await expect(createEngine(options({ documents: [{ name: 'v1', document: broken, handlers }] }))).rejects.toThrow(
      /listNotes.*names the scheme missing, which components.securitySchemes does not define/,
    );
    await expect(createEngine(options({ documents: [] }))).rejects.toThrow(/no document/);
  });

  it('refuses token verification that would accept any issuer or audience, unless told so', async () => {
    const tokens = { jwksUrl: 'https://issuer.example/jwks.json' };
    await expect(createEngine(options({ tokens }))).rejects.toThrow(/tokens.issuer and tokens.audience must both be set/);
    await expect(createEngine(options({ tokens: { ...tokens, issuer: 'https://issuer.example/' } }))).rejects.toThrow(/must both be set/);
    await expect(createEngine(options({ tokens: { ...tokens, issuer: 'https://issuer.example/', audience: 'notes' } }))).resolves.toBeDefined();
    await expect(createEngine(options({ tokens: { ...tokens, acceptAnyIssuerAndAudience: true } }))).resolves.toBeDefined();
  });

  it('names the published documents of its documents only', async () => {
    const names: Array<string | undefined> = [];
    const { app } = await createEngine(options({ observe: (req, res) => void res.once('finish', () => names.push(contextOf(req).operationName)) }));
    await request(app).get('/openapi/v1.yaml').expect(200);
    await request(app).get('/openapi/latest.json').expect(404);
    expect(names).toEqual(['spec', 'unmatched']);
  });

  it('tells the warnings of the start apart: a refused part, an invalid example', async () => {
    const withBadExample = structuredClone(NOTES) as OpenApiDocument & {
      paths: { '/notes/{noteId}': { get: { responses: { '200': { content: { 'application/json': { example: unknown } } } } } } };
    };
    withBadExample.paths['/notes/{noteId}'].get.responses['200'].content['application/json'].example = { id: 'seven' };
    const { warnings } = await createEngine(options({ documents: [{ name: 'v1', document: withBadExample, handlers }], mock: true }));
    expect(warnings).toEqual([{ document: 'v1', kind: 'invalid example', message: expect.stringMatching(/getNote/) }]);
  });

  it('without a credential check every key is refused with a 401 that says why', async () => {
    const { app } = await createEngine({ documents: [{ name: 'v1', document: NOTES, handlers }], logger: { warn: () => undefined, error: () => undefined } });
    const res = await request(app).get('/v1/notes').set('X-Api-Key', 'k1').expect(401);
    expect(res.body.message).toMatch(/no credential check/);
  });
});
