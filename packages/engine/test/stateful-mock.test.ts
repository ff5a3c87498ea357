/**
 * The stateful mock (`mock: 'stateful'`), driven over HTTP as a front end
 * drives it: a document written as a designer would (notes, pages of
 * notebooks, operations that pair with nothing), and a third-party document
 * (RealWorld's Conduit, whose items travel in envelopes). Every answer is
 * judged by what the document says.
 */
import path from 'node:path';
import request from 'supertest';
import { ApiError, createEngine, notImplementedHandler, type EngineOptions, type OpenApiDocument } from '../src/index';
import { ItemStore } from '../src/mock/item-store';
import { applyMergePatch } from '../src/mock/merge-patch';
import { resourcePairs } from '../src/mock/resource-pairs';

const error = { $ref: '#/components/responses/Error' };
const noteId = { name: 'noteId', in: 'path', required: true, schema: { type: 'integer' } };
const json = (schema: unknown) => ({ 'application/json': { schema } });

const NOTES: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Notes', version: '1.0.0' },
  security: [{ apiKey: [] }],
  paths: {
    '/notes': {
      get: {
        operationId: 'listNotes',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50 } },
          { name: 'status', in: 'query', schema: { type: 'string', enum: ['draft', 'done'] } },
        ],
        responses: {
          '200': {
            description: 'a page of notes',
            headers: { Link: { schema: { type: 'string' }, example: '</v1/notes?cursor=abc>; rel="next"' } },
            content: json({
              type: 'object',
              required: ['items', 'total'],
              properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Note' } }, total: { type: 'integer' } },
            }),
          },
          default: error,
        },
      },
      post: {
        operationId: 'createNote',
        requestBody: { required: true, content: json({ $ref: '#/components/schemas/NewNote' }) },
        responses: {
          '201': {
            description: 'created',
            headers: {
              Location: { schema: { type: 'string' }, example: '/v1/notes/7' },
              'X-Owner': { required: true, schema: { type: 'string' }, example: 'member:1' },
            },
            content: json({ $ref: '#/components/schemas/Note' }),
          },
          default: error,
        },
      },
    },
    '/notes/{noteId}': {
      parameters: [noteId],
      get: { operationId: 'getNote', responses: { '200': { description: 'a note', content: json({ $ref: '#/components/schemas/Note' }) }, '404': error } },
      patch: {
        operationId: 'updateNote',
        requestBody: {
          required: true,
          content: {
            'application/merge-patch+json': { schema: { $ref: '#/components/schemas/NotePatch' } },
            'application/json': { schema: { $ref: '#/components/schemas/NotePatch' } },
          },
        },
        responses: { '200': { description: 'changed', content: json({ $ref: '#/components/schemas/Note' }) }, '404': error },
      },
      put: {
        operationId: 'replaceNote',
        requestBody: { required: true, content: json({ $ref: '#/components/schemas/NewNote' }) },
        responses: { '200': { description: 'replaced', content: json({ $ref: '#/components/schemas/Note' }) }, '404': error },
      },
      delete: { operationId: 'deleteNote', responses: { '204': { description: 'gone' }, '404': error } },
    },
    '/notes/{noteId}/archive': {
      parameters: [noteId],
      post: {
        operationId: 'archiveNote',
        responses: { '200': { description: 'archived', content: json({ $ref: '#/components/schemas/Note' }) } },
      },
    },
    '/notes/import': {
      post: {
        operationId: 'importNotes',
        requestBody: {
          required: true,
          content: { 'application/jsonl': { schema: { type: 'array', items: { $ref: '#/components/schemas/NewNote' } } } },
        },
        responses: {
          '202': {
            description: 'accepted',
            content: json({ type: 'object', required: ['accepted'], properties: { accepted: { type: 'integer' } }, example: { accepted: 3 } }),
          },
          default: error,
        },
      },
    },
    '/notebooks/{notebookId}/pages': {
      parameters: [{ name: 'notebookId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: 'listPages',
        responses: { '200': { description: 'pages', content: json({ type: 'array', items: { $ref: '#/components/schemas/Page' } }) } },
      },
      post: {
        operationId: 'addPage',
        requestBody: { required: true, content: json({ type: 'object', required: ['title'], properties: { title: { type: 'string' } } }) },
        responses: { '201': { description: 'added', content: json({ $ref: '#/components/schemas/Page' }) } },
      },
    },
    '/notebooks/{notebookId}/pages/{pageId}': {
      parameters: [
        { name: 'notebookId', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'pageId', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: { operationId: 'getPage', responses: { '200': { description: 'a page', content: json({ $ref: '#/components/schemas/Page' }) }, '404': error } },
    },
    '/stats': {
      get: {
        operationId: 'stats',
        responses: {
          '200': {
            description: 'counts',
            content: { 'application/json': { schema: { type: 'object', properties: { notes: { type: 'integer' } } }, example: { notes: 42 } } },
          },
        },
      },
    },
    '/labels': {
      post: {
        operationId: 'createLabel',
        requestBody: { required: true, content: json({ type: 'object', properties: { name: { type: 'string' } } }) },
        responses: {
          '201': {
            description: 'created',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^label-[a-z]+$' }, name: { type: 'string' } } },
                example: { id: 'label-red', name: 'red' },
              },
            },
          },
        },
      },
    },
    '/labels/{labelId}': {
      get: {
        operationId: 'getLabel',
        parameters: [{ name: 'labelId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'a label', content: json({ type: 'object', properties: { id: { type: 'string' } } }) } },
      },
    },
  },
  components: {
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
    schemas: {
      Note: {
        type: 'object',
        required: ['id', 'text', 'status', 'createdAt'],
        properties: {
          id: { type: 'integer', readOnly: true },
          text: { type: 'string', minLength: 1 },
          status: { type: 'string', enum: ['draft', 'done'], default: 'draft' },
          createdAt: { type: 'string', format: 'date-time', readOnly: true },
          secret: { type: 'string', writeOnly: true },
        },
      },
      NewNote: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: { text: { type: 'string', minLength: 1 }, status: { type: 'string', enum: ['draft', 'done'] }, secret: { type: 'string' } },
      },
      NotePatch: {
        type: 'object',
        properties: { text: { type: ['string', 'null'] }, status: { type: ['string', 'null'], enum: ['draft', 'done', null] } },
      },
      Page: { type: 'object', required: ['pageId', 'title'], properties: { pageId: { type: 'string' }, title: { type: 'string' } } },
      Error: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
      },
    },
    responses: { Error: { description: 'an error', content: json({ $ref: '#/components/schemas/Error' }) } },
  },
};

/** Every operation a stub but one, whose handler must never be called in stateful mode. */
const handlers: Record<string, unknown> = {
  ...Object.fromEntries(
    [
      'createNote',
      'getNote',
      'updateNote',
      'replaceNote',
      'deleteNote',
      'archiveNote',
      'importNotes',
      'listPages',
      'addPage',
      'getPage',
      'stats',
      'createLabel',
      'getLabel',
    ].map((id) => [id, notImplementedHandler(id)]),
  ),
  listNotes: async () => {
    throw new Error('a handler was called in stateful mode');
  },
};

const options = (more: Partial<EngineOptions> = {}): EngineOptions => ({
  documents: [{ name: 'v1', document: NOTES, handlers }],
  credentials: {
    key: (key) => {
      if (key !== 'k1') throw new ApiError(401, 'unauthorized', 'unknown key');
      return { principal: 'member:1' };
    },
  },
  logger: { warn: () => undefined, error: () => undefined },
  ...more,
});

const isErrorObject = (body: unknown, status: number, code: string): void => {
  expect(body).toEqual({ code, message: expect.any(String), status });
};

type App = Awaited<ReturnType<typeof createEngine>>['app'];

describe("mock: 'stateful', a document of notes", () => {
  let app: App;
  const as = () => ({ 'X-Api-Key': 'k1' });
  beforeAll(async () => {
    ({ app } = await createEngine(options({ mock: 'stateful' })));
  });

  it('a POST on the collection stores the body over a sample, with a counted id, answering 201 with Location', async () => {
    const res = await request(app).post('/v1/notes').set(as()).send({ text: 'first', secret: 's3' }).expect(201);
    expect(res.body).toEqual({ id: 1, text: 'first', status: 'draft', createdAt: expect.any(String) });
    expect(res.headers['location']).toBe('/v1/notes/1');
    expect(res.headers['x-mock']).toBe('stateful');
    expect(res.headers['x-owner']).toBe('member:1');
    const second = await request(app).post('/v1/notes').set(as()).send({ text: 'second', status: 'done' }).expect(201);
    expect(second.body).toMatchObject({ id: 2, text: 'second', status: 'done' });
    expect(second.headers['location']).toBe('/v1/notes/2');
  });

  it('a GET on the item finds what was stored, and answers the 404 Error object for an id it does not hold', async () => {
    const res = await request(app).get('/v1/notes/1').set(as()).expect(200);
    expect(res.body).toMatchObject({ id: 1, text: 'first', status: 'draft' });
    expect(res.headers['x-mock']).toBe('stateful');
    isErrorObject((await request(app).get('/v1/notes/99').set(as()).expect(404)).body, 404, 'not_found');
  });

  it('a GET on the collection lists the items in the array of its envelope, filtered by a query named like a property, limited by limit', async () => {
    const all = await request(app).get('/v1/notes').set(as()).expect(200);
    expect(all.body.items.map((note: { id: number }) => note.id)).toEqual([1, 2]);
    expect(all.body.total).toBe(2);
    // An optional header tells of a state the store does not have (here, a next page): left out.
    expect(all.headers['link']).toBeUndefined();
    const done = await request(app).get('/v1/notes?status=done').set(as()).expect(200);
    expect(done.body).toEqual({ items: [expect.objectContaining({ id: 2 })], total: 1 });
    const one = await request(app).get('/v1/notes?limit=1').set(as()).expect(200);
    expect(one.body).toEqual({ items: [expect.objectContaining({ id: 1 })], total: 2 });
  });

  it('PATCH applies a JSON Merge Patch (null removes), or merges application/json shallowly; a result its schema refuses is a 400', async () => {
    const patched = await request(app)
      .patch('/v1/notes/1')
      .set(as())
      .set('Content-Type', 'application/merge-patch+json')
      .send('{"text":"changed"}')
      .expect(200);
    expect(patched.body).toMatchObject({ id: 1, text: 'changed', status: 'draft' });
    const merged = await request(app).patch('/v1/notes/1').set(as()).send({ status: 'done' }).expect(200);
    expect(merged.body).toMatchObject({ id: 1, text: 'changed', status: 'done' });
    const refused = await request(app).patch('/v1/notes/1').set(as()).set('Content-Type', 'application/merge-patch+json').send('{"status":null}').expect(400);
    isErrorObject(refused.body, 400, 'invalid_request');
    expect(refused.body.message).toMatch(/status/);
    expect((await request(app).get('/v1/notes/1').set(as()).expect(200)).body).toMatchObject({ text: 'changed', status: 'done' });
    isErrorObject((await request(app).patch('/v1/notes/99').set(as()).send({ text: 'x' }).expect(404)).body, 404, 'not_found');
  });

  it('PUT replaces the item with the body over a sample, as a create makes it, under the same id', async () => {
    expect((await request(app).get('/v1/notes/2').set(as()).expect(200)).body).toMatchObject({ status: 'done' });
    const res = await request(app).put('/v1/notes/2').set(as()).send({ text: 'replaced' }).expect(200);
    expect(res.body).toEqual({ id: 2, text: 'replaced', status: 'draft', createdAt: expect.any(String) });
    expect((await request(app).get('/v1/notes/2').set(as()).expect(200)).body).toEqual(res.body);
    await request(app).put('/v1/notes/99').set(as()).send({ text: 'x' }).expect(404);
  });

  it('DELETE removes (204), after which the item is a 404', async () => {
    const created = await request(app).post('/v1/notes').set(as()).send({ text: 'doomed' }).expect(201);
    const url = created.headers['location'] as string;
    const gone = await request(app).delete(url).set(as()).expect(204);
    expect(gone.text).toBe('');
    await request(app).get(url).set(as()).expect(404);
    await request(app).delete(url).set(as()).expect(404);
  });

  it('a nested collection is kept per parent, with string ids in the property named like the parameter', async () => {
    const page = await request(app).post('/v1/notebooks/work/pages').set(as()).send({ title: 'Monday' }).expect(201);
    expect(page.body).toEqual({ pageId: '1', title: 'Monday' });
    expect((await request(app).get('/v1/notebooks/work/pages/1').set(as()).expect(200)).body).toEqual({ pageId: '1', title: 'Monday' });
    await request(app).get('/v1/notebooks/home/pages/1').set(as()).expect(404);
    expect((await request(app).get('/v1/notebooks/work/pages').set(as()).expect(200)).body).toEqual([{ pageId: '1', title: 'Monday' }]);
    expect((await request(app).get('/v1/notebooks/home/pages').set(as()).expect(200)).body).toEqual([]);
  });

  it('operations that pair with nothing answer their examples', async () => {
    const stats = await request(app).get('/v1/stats').set(as()).expect(200);
    expect(stats.body).toEqual({ notes: 42 });
    expect(stats.headers['x-mock']).toBe('example');
    expect((await request(app).post('/v1/notes/1/archive').set(as()).expect(200)).headers['x-mock']).toBe('example');
  });

  it('a created item its schema refuses (an id the counter cannot make) is not stored: the example is answered', async () => {
    const res = await request(app).post('/v1/labels').set(as()).send({ name: 'blue' }).expect(201);
    expect(res.body).toEqual({ id: 'label-red', name: 'red' });
    expect(res.headers['x-mock']).toBe('example');
    await request(app).get('/v1/labels/1').set(as()).expect(404);
  });

  it('Prefer asks for an example answer instead of the stored state', async () => {
    const res = await request(app).get('/v1/notes/1').set(as()).set('Prefer', 'code=404').expect(404);
    expect(res.headers['x-mock']).toBe('example');
  });

  it('authentication and validation run as ever, though handlers are not called', async () => {
    isErrorObject((await request(app).get('/v1/notes').expect(401)).body, 401, 'unauthorized');
    isErrorObject((await request(app).get('/v1/notes').set('X-Api-Key', 'nope').expect(401)).body, 401, 'unauthorized');
    isErrorObject((await request(app).post('/v1/notes').set(as()).send({ text: '' }).expect(400)).body, 400, 'invalid_request');
    isErrorObject((await request(app).get('/v1/notes/abc').set(as()).expect(400)).body, 400, 'invalid_request');
  });

  it('keeps its state per engine: a new one starts empty', async () => {
    const { app: fresh } = await createEngine(options({ mock: 'stateful' }));
    expect((await request(fresh).get('/v1/notes').set(as()).expect(200)).body).toEqual({ items: [], total: 0 });
  });
});

describe('mock: the examples mode is unchanged', () => {
  it('a stub answers its example, whatever was posted before', async () => {
    const { app } = await createEngine(options({ mock: true }));
    const created = await request(app).post('/v1/notes').set('X-Api-Key', 'k1').send({ text: 'first' }).expect(201);
    expect(created.headers['x-mock']).toBe('example');
    expect(created.headers['location']).toBe('/v1/notes/7');
    await request(app).get('/v1/notes/12345').set('X-Api-Key', 'k1').expect(200);
  });
});

describe('mocks read a body of items to its end', () => {
  const lines = (...items: unknown[]): string => `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  for (const mock of [true, 'stateful'] as const) {
    it(`valid items get the answer, a bad third item the 400 naming it (mock: ${mock})`, async () => {
      const { app } = await createEngine(options({ mock }));
      const send = (body: string) => request(app).post('/v1/notes/import').set('X-Api-Key', 'k1').set('Content-Type', 'application/jsonl').send(body);
      expect((await send(lines({ text: 'a' }, { text: 'b' }, { text: 'c' })).expect(202)).body).toEqual({ accepted: 3 });
      const refused = await send(lines({ text: 'a' }, { text: 'b' }, { title: 'c' })).expect(400);
      isErrorObject(refused.body, 400, 'invalid_request');
      expect(refused.body.message).toMatch(/^body line 3 must have required property 'text'/);
      isErrorObject((await send(lines({ text: 'a' }, { text: 'b' }, 'not json').replace('"not json"', 'not json')).expect(400)).body, 400, 'invalid_request');
    });
  }
});

describe("mock: 'stateful', a third-party document (RealWorld Conduit)", () => {
  let app: App;
  const token = { Authorization: 'Token abc' };
  beforeAll(async () => {
    ({ app } = await createEngine({
      documents: [{ name: 'api', document: path.join(__dirname, '../../../test/fixtures/new-project/realworld-conduit/openapi.yml'), handlers: {} }],
      credentials: { key: () => ({ principal: 'reader' }) },
      mock: 'stateful',
      logger: { warn: () => undefined, error: () => undefined },
    }));
  });

  it('pairs /articles with /articles/{slug}, and the comments of an article, items inside their envelopes', async () => {
    const created = await request(app)
      .post('/api/articles')
      .set(token)
      .send({ article: { title: 'Hello', description: 'first', body: 'text', tagList: ['intro'] } })
      .expect(201);
    expect(created.body.article).toMatchObject({ slug: '1', title: 'Hello', description: 'first', body: 'text', tagList: ['intro'] });
    expect(created.headers['x-mock']).toBe('stateful');
    expect((await request(app).get('/api/articles/1').expect(200)).body.article).toMatchObject({ slug: '1', title: 'Hello' });
    const list = await request(app).get('/api/articles').expect(200);
    expect(list.body).toEqual({ articles: [expect.objectContaining({ slug: '1' })], articlesCount: 1 });
    const updated = await request(app)
      .put('/api/articles/1')
      .set(token)
      .send({ article: { title: 'Hello again' } })
      .expect(200);
    expect(updated.body.article).toMatchObject({ slug: '1', title: 'Hello again' });

    const comment = await request(app)
      .post('/api/articles/1/comments')
      .set(token)
      .send({ comment: { body: 'nice' } })
      .expect(200);
    expect(comment.body.comment).toMatchObject({ id: 1, body: 'nice' });
    expect((await request(app).get('/api/articles/1/comments').expect(200)).body).toEqual({ comments: [expect.objectContaining({ id: 1, body: 'nice' })] });
    await request(app).delete('/api/articles/1/comments/1').set(token).expect(204);
    expect((await request(app).get('/api/articles/1/comments').expect(200)).body).toEqual({ comments: [] });

    await request(app).delete('/api/articles/1').set(token).expect(204);
    isErrorObject((await request(app).get('/api/articles/1').expect(404)).body, 404, 'not_found');
  });

  it('answers the operations that pair with nothing with their examples, and still asks for the token', async () => {
    expect((await request(app).get('/api/tags').expect(200)).headers['x-mock']).toBe('example');
    await request(app)
      .post('/api/articles')
      .send({ article: { title: 'x', description: 'y', body: 'z' } })
      .expect(401);
  });
});

describe('the parts of the stateful mock', () => {
  it('pairs by the shape of paths: the id property is named like the parameter, else id; unpaired operations are left out', () => {
    const pairs = resourcePairs(NOTES);
    expect(Object.fromEntries([...pairs].map(([id, op]) => [id, op.role]))).toEqual({
      listNotes: 'list',
      createNote: 'create',
      getNote: 'read',
      updateNote: 'update',
      replaceNote: 'replace',
      deleteNote: 'remove',
      listPages: 'list',
      addPage: 'create',
      getPage: 'read',
      createLabel: 'create',
      getLabel: 'read',
    });
    expect(pairs.get('getNote')!.pair).toMatchObject({ collection: '/notes', parameter: 'noteId', idProperty: 'id', idKind: 'integer' });
    expect(pairs.get('getPage')!.pair).toMatchObject({ parents: ['notebookId'], idProperty: 'pageId', idKind: 'string' });
  });

  it('keeps a version per item, counted from 1 and raised by every change', () => {
    const store = new ItemStore();
    const pair = resourcePairs(NOTES).get('getNote')!.pair;
    const key = store.collectionKey(pair, {});
    expect(store.put(key, '1', { id: 1 }).version).toBe(1);
    expect(store.put(key, '1', { id: 1, text: 'b' }).version).toBe(2);
    expect(store.get(key, '1')).toEqual({ value: { id: 1, text: 'b' }, version: 2 });
    expect(store.delete(key, '1')).toBe(true);
    expect(store.put(key, '1', { id: 1 }).version).toBe(1);
  });

  it('applies JSON Merge Patch as RFC 7396 does', () => {
    expect(applyMergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })).toEqual({ a: 'z', c: { d: 'e' } });
    expect(applyMergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(applyMergePatch({ a: 'b' }, ['c'])).toEqual(['c']);
    expect(applyMergePatch({ a: 'foo' }, null)).toBeNull();
    expect(applyMergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } });
    const polluted = applyMergePatch({}, JSON.parse('{"__proto__":{"admin":true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(polluted)).toBe(Object.prototype);
    expect(Object.keys(polluted)).toEqual(['__proto__']);
  });
});
