/**
 * Conditional requests and problem details, generated from what a document
 * declares (its If-Match / If-None-Match parameters, its ETag header, its
 * 304 / 412 / 428 responses, application/problem+json), on a document of its
 * own: the handlers only give the version of what they return and check the
 * request's conditions before they write. Answers are judged by RFC 9110 and
 * RFC 9457, not by the engine's code.
 */
import request from 'supertest';
import { ApiError, createEngine, type EngineOptions, type OpenApiDocument } from '../src/index';

const error = (description: string) => ({
  description,
  content: {
    'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
  },
});
const noteId = { name: 'noteId', in: 'path', required: true, schema: { type: 'integer' } };
const ifMatch = { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } };
const ifNoneMatch = { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } };
const note = {
  description: 'a note',
  headers: { ETag: { schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Note' } } },
};

const DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Notes', version: '1.0.0' },
  security: [{ apiKey: [] }],
  paths: {
    '/notes/{noteId}': {
      parameters: [noteId],
      get: {
        operationId: 'getNote',
        parameters: [ifNoneMatch],
        responses: { '200': note, '304': { description: 'not modified' }, '404': error('none'), default: error('error') },
      },
      patch: {
        operationId: 'updateNote',
        parameters: [ifMatch, ifNoneMatch],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } } } } } },
        responses: { '200': note, '404': error('none'), '412': error('stale'), '428': error('unconditional'), default: error('error') },
      },
      put: {
        operationId: 'replaceNote',
        parameters: [ifMatch],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } } } } } },
        // No 428: a write without If-Match is allowed. No ETag declared: none is sent.
        responses: { '200': { ...note, headers: {} }, '412': error('stale'), default: error('error') },
      },
      delete: {
        operationId: 'deleteNote',
        parameters: [ifMatch],
        responses: { '204': { description: 'gone' }, '412': error('stale'), default: error('error') },
      },
    },
  },
  components: {
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
    schemas: {
      Note: { type: 'object', required: ['id', 'text'], properties: { id: { type: 'integer' }, text: { type: 'string' } } },
      Error: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
      },
      Problem: { type: 'object', properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } } },
    },
  },
};

/** Drops problem+json from a document: its errors are never negotiated. */
const withoutProblems = (document: OpenApiDocument): OpenApiDocument =>
  JSON.parse(JSON.stringify(document).replaceAll('"application/problem+json"', '"application/x-other+json"'));

type Conditions = { check(current: string | undefined): void };
interface Stored {
  text: string;
  version: number;
}
const store = new Map<number, Stored>();
/** Whether getNote gives its version (a handler may not). */
let versioned = true;
/** Whether getNote checks the conditions itself, as a write does (a read may). */
let checking = false;
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A write as a store writes it: check the version read, then compare-and-set, and check again when someone else won. */
async function write(id: number, text: string, conditions: Conditions) {
  const current = store.get(id);
  if (!current) return { status: 404, body: { code: 'not_found', message: `note ${id} does not exist`, status: 404 } };
  conditions.check(String(current.version));
  const seen = current.version;
  await tick();
  const now = store.get(id)!;
  if (now.version !== seen) conditions.check(String(now.version));
  now.text = text;
  now.version += 1;
  return { status: 200, body: { id, text }, etag: String(now.version) };
}

const handlers = {
  getNote: async ({ params, conditions }: { params: { noteId: number }; conditions: Conditions }) => {
    const found = store.get(params.noteId);
    if (!found) return { status: 404, body: { code: 'not_found', message: `note ${params.noteId} does not exist`, status: 404 } };
    if (checking) conditions.check(String(found.version));
    const body = { id: params.noteId, text: found.text };
    return versioned ? { status: 200, body, etag: String(found.version) } : { status: 200, body };
  },
  updateNote: async ({ params, body, conditions }: { params: { noteId: number }; body: { text: string }; conditions: Conditions }) =>
    write(params.noteId, body.text, conditions),
  replaceNote: async ({ params, body, conditions }: { params: { noteId: number }; body: { text: string }; conditions: Conditions }) =>
    write(params.noteId, body.text, conditions),
  // A handler that forgets its check: the engine must not answer as if the condition held.
  deleteNote: async () => ({ status: 204 }),
};

const options = (document: OpenApiDocument): EngineOptions => ({
  documents: [{ name: 'v1', document, handlers }],
  credentials: {
    key: (key) => {
      if (key !== 'k1') throw new ApiError(401, 'unauthorized', 'unknown key');
      return { principal: 'member:1' };
    },
  },
  logger: { warn: () => undefined, error: () => undefined },
});

let app: Awaited<ReturnType<typeof createEngine>>['app'];
beforeAll(async () => {
  ({ app } = await createEngine(options(DOCUMENT)));
});
beforeEach(() => {
  store.clear();
  store.set(1, { text: 'first', version: 1 });
});

const get = (headers: Record<string, string> = {}) =>
  request(app)
    .get('/v1/notes/1')
    .set({ 'X-Api-Key': 'k1', ...headers });
const patch = (headers: Record<string, string> = {}) =>
  request(app)
    .patch('/v1/notes/1')
    .set({ 'X-Api-Key': 'k1', ...headers })
    .send({ text: 'changed' });

describe('ETag and If-None-Match on a read that declares 304', () => {
  it('sends the version the handler gives as a strong ETag', async () => {
    const res = await get().expect(200);
    expect(res.headers.etag).toBe('"1"');
  });

  it('answers 304 with the ETag and no body when If-None-Match names it, weakly compared, or is *', async () => {
    for (const value of ['"1"', 'W/"1"', '"0", "1"', '*']) {
      const res = await get({ 'If-None-Match': value });
      expect([value, res.status]).toEqual([value, 304]);
      expect(res.headers.etag).toBe('"1"');
      expect(res.text ?? '').toBe('');
    }
  });

  it('a read whose handler checks the conditions itself still answers 304 for a matching If-None-Match, never 412', async () => {
    checking = true;
    try {
      await get({ 'If-None-Match': '"1"' }).expect(304);
      await get({ 'If-None-Match': '"0"' }).expect(200);
    } finally {
      checking = false;
    }
  });

  it('answers 200 when If-None-Match names another version', async () => {
    const res = await get({ 'If-None-Match': '"2", W/"3"' }).expect(200);
    expect(res.body).toEqual({ id: 1, text: 'first' });
  });

  it('a read whose handler gives no version answers in full, whatever If-None-Match says', async () => {
    versioned = false;
    try {
      const res = await get({ 'If-None-Match': '"1"' }).expect(200);
      expect(res.headers.etag).toBeUndefined();
    } finally {
      versioned = true;
    }
  });

  it('refuses a malformed If-None-Match: 400', async () => {
    const res = await get({ 'If-None-Match': 'not-a-tag' }).expect(400);
    expect(res.body.code).toBe('invalid_request');
  });
});

describe('If-Match on writes', () => {
  it('428 for a write without a condition when the operation declares 428; nothing changes', async () => {
    const res = await patch().expect(428);
    expect(res.body).toEqual({ code: 'precondition_required', message: expect.stringMatching(/If-Match/), status: 428 });
    expect(store.get(1)).toEqual({ text: 'first', version: 1 });
  });

  it('412 for a stale tag, and for a weak tag (If-Match compares strongly); nothing changes', async () => {
    for (const value of ['"0"', 'W/"1"', '"2", "3"']) {
      const res = await patch({ 'If-Match': value });
      expect([value, res.status, res.body.code]).toEqual([value, 412, 'precondition_failed']);
    }
    expect(store.get(1)).toEqual({ text: 'first', version: 1 });
  });

  it('applies a write whose If-Match names the current version (or is *), answering the new ETag', async () => {
    const res = await patch({ 'If-Match': '"1"' }).expect(200);
    expect(res.headers.etag).toBe('"2"');
    expect((await patch({ 'If-Match': '*' }).expect(200)).headers.etag).toBe('"3"');
  });

  it('If-None-Match: * on a write to an existing resource is a 412', async () => {
    await patch({ 'If-None-Match': '*' }).expect(412);
  });

  it('two writers with the same If-Match: one 200, one 412', async () => {
    const both = await Promise.all([patch({ 'If-Match': '"1"' }), patch({ 'If-Match': '"1"' })]);
    expect(both.map((res) => res.status).sort()).toEqual([200, 412]);
    expect(store.get(1)!.version).toBe(2);
  });

  it('a write that does not declare 428 runs without a condition; a response that declares no ETag sends none', async () => {
    const res = await request(app).put('/v1/notes/1').set('X-Api-Key', 'k1').send({ text: 'x' }).expect(200);
    expect(res.headers.etag).toBeUndefined();
  });

  it("a 412 carries the current version's ETag", async () => {
    expect((await patch({ 'If-Match': '"0"' }).expect(412)).headers.etag).toBe('"1"');
  });

  it('a handler that skips its check never answers success to a conditional write', async () => {
    const res = await request(app).delete('/v1/notes/1').set({ 'X-Api-Key': 'k1', 'If-Match': '"9"' });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal_error');
  });
});

describe('problem details, negotiated by Accept', () => {
  const isProblem = (res: request.Response, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toEqual({ type: 'about:blank', title: expect.any(String), status, detail: expect.any(String), code });
    expect(res.headers.vary).toMatch(/Accept/);
  };

  it("answers a handler's error, an engine refusal and a precondition as RFC 9457 when Accept prefers it", async () => {
    // As clients ask: both, problem details first (Accept: application/problem+json alone refuses a JSON success: a 406, itself a problem).
    const accept = { Accept: 'application/json;q=0.5, application/problem+json' };
    const missing = await request(app)
      .get('/v1/notes/9')
      .set({ 'X-Api-Key': 'k1', ...accept });
    isProblem(missing, 404, 'not_found');
    expect(missing.body.title).toBe('Not Found');
    isProblem(await request(app).get('/v1/notes/1').set(accept), 401, 'unauthorized');
    isProblem(await patch(accept), 428, 'precondition_required');
    isProblem(await patch({ ...accept, 'If-Match': '"7"' }), 412, 'precondition_failed');
    isProblem(await request(app).get('/v1/notes/1').set({ 'X-Api-Key': 'k1', Accept: 'application/problem+json' }), 406, 'not_acceptable');
  });

  it('keeps the Error object otherwise: no Accept, */*, application/json, application/*', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/*', 'application/problem+json;q=0.5, application/json']) {
      const req = request(app).get('/v1/notes/9').set('X-Api-Key', 'k1');
      const res = await (accept === undefined ? req : req.set('Accept', accept));
      expect([accept, res.status, res.headers['content-type']]).toEqual([accept, 404, 'application/json; charset=utf-8']);
      expect(res.body).toEqual({ code: 'not_found', message: 'note 9 does not exist', status: 404 });
    }
    const refused = await request(app).get('/v1/notes/9').set({ 'X-Api-Key': 'k1', Accept: 'text/html' }).expect(406);
    expect(refused.body.code).toBe('not_acceptable');
  });

  it('never answers problem details for a document that does not declare them', async () => {
    const plain = (await createEngine(options(withoutProblems(DOCUMENT)))).app;
    const res = await request(plain).get('/v1/notes/9').set({ 'X-Api-Key': 'k1', Accept: 'application/json;q=0.1, application/problem+json' });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.code).toBe('not_found');
  });
});
