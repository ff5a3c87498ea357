/**
 * Request and response media types, on a purpose-written document served
 * through the composition root (as v1): JSON and `+json`, forms (with an
 * `encoding` object), multipart fields and files within the limits, bytes
 * for binary types, text; 415 for a media type the operation does not
 * declare, 400 for a required body that is absent or invalid, 413 for one
 * over the limit; responses in JSON, text and bytes, `Accept` choosing among
 * the declared ones, 406 when none is acceptable.
 */
import type { OpenApiDocument } from '@spec-first/engine';
import { startTestApp, type TestApp } from './support/test-app';

const pet = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
};
const echoed = {
  '200': { description: 'what the handler received', content: { 'application/json': { schema: { type: 'object' } } } },
  default: { description: 'error' },
};
const body = (content: object, required = true) => ({ required, content });

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'media', version: '1.0.0' },
  security: [],
  paths: {
    '/json': {
      post: {
        operationId: 'json',
        requestBody: body({ 'application/json': { schema: pet }, 'application/merge-patch+json': { schema: pet } }),
        responses: echoed,
      },
    },
    '/form': {
      post: {
        operationId: 'form',
        requestBody: body({
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['name'],
              properties: { name: { type: 'string' }, age: { type: 'integer' }, meta: { type: 'object', properties: { color: { type: 'string' } } } },
            },
            encoding: { meta: { contentType: 'application/json' } },
          },
        }),
        responses: echoed,
      },
    },
    '/upload': {
      post: {
        operationId: 'upload',
        requestBody: body({
          'multipart/form-data': {
            schema: { type: 'object', required: ['photo'], properties: { caption: { type: 'string' }, photo: { type: 'string', format: 'binary' } } },
          },
        }),
        responses: echoed,
      },
    },
    '/bytes': { put: { operationId: 'bytes', requestBody: body({ 'application/octet-stream': {}, 'image/png': {} }), responses: echoed } },
    '/text': { post: { operationId: 'text', requestBody: body({ 'text/plain': { schema: { type: 'string', maxLength: 10 } } }), responses: echoed } },
    '/export': {
      get: {
        operationId: 'exportPets',
        responses: {
          '200': {
            description: 'the pets, as JSON or CSV',
            content: { 'application/json': { schema: { type: 'array', items: pet } }, 'text/csv': { schema: { type: 'string' } } },
          },
          default: { description: 'error' },
        },
      },
    },
    '/photo': {
      get: { operationId: 'photo', responses: { '200': { description: 'a PNG', content: { 'image/png': {} } }, default: { description: 'error' } } },
    },
  },
} as unknown as OpenApiDocument;

/** What arrived, in a form JSON can carry: Blobs and Files by type and size. */
const describe_ = (value: unknown): unknown => {
  if (value instanceof File) return { file: value.name, type: value.type, size: value.size };
  if (value instanceof Blob) return { blob: value.type, size: value.size };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describe_(v)]));
  return value;
};
const echo = async (input: { mediaType?: string; body?: unknown }) => ({
  status: 200,
  body: { mediaType: input.mediaType ?? null, body: describe_(input.body) ?? null },
});
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    versions: [
      {
        name: 'v1',
        contract: DOCUMENT,
        handlers: {
          json: echo,
          form: echo,
          upload: echo,
          bytes: echo,
          text: echo,
          exportPets: async (input: { accept?: string }) =>
            input.accept === 'text/csv'
              ? { status: 200, mediaType: 'text/csv', body: 'name\nRex\n' }
              : { status: 200, mediaType: 'application/json', body: [{ name: 'Rex' }] },
          photo: async () => ({ status: 200, mediaType: 'image/png', body: new Blob([PNG], { type: 'image/png' }) }),
        } as never,
      },
    ],
  });
});
afterAll(() => t.close());

describe('request bodies', () => {
  it('JSON and +json reach the handler parsed; an invalid one is a 400', async () => {
    expect((await t.api.post('/v1/json').send({ name: 'Rex', age: 3 }).expect(200)).body).toEqual({
      mediaType: 'application/json',
      body: { name: 'Rex', age: 3 },
    });
    const patch = await t.api
      .post('/v1/json')
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ name: 'Rex' }))
      .expect(200);
    expect(patch.body.mediaType).toBe('application/merge-patch+json');
    expect((await t.api.post('/v1/json').send({ name: '' }).expect(400)).body).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('a form, its integers coerced and a field of another content type (encoding) parsed as JSON', async () => {
    const answer = await t.api.post('/v1/form').type('form').send('name=Rex&age=3&meta=%7B%22color%22%3A%22red%22%7D');
    expect(answer.body.message).toBeUndefined();
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ mediaType: 'application/x-www-form-urlencoded', body: { name: 'Rex', age: 3, meta: { color: 'red' } } });
    await t.api.post('/v1/form').type('form').send('age=3').expect(400); // name is required
  });

  it('multipart: fields and files reach the handler, files as File objects', async () => {
    const answer = await t.api.post('/v1/upload').field('caption', 'a pet').attach('photo', PNG, { filename: 'rex.png', contentType: 'image/png' }).expect(200);
    expect(answer.body).toEqual({
      mediaType: 'multipart/form-data',
      body: { caption: 'a pet', photo: { file: 'rex.png', type: 'image/png', size: PNG.length } },
    });
    await t.api.post('/v1/upload').field('caption', 'no photo').expect(400);
  });

  it('multipart over the body limit is a 413, never a 500', async () => {
    const refused = await t.api
      .post('/v1/upload')
      .attach('photo', Buffer.alloc(2 * 1024 * 1024), { filename: 'big.bin', contentType: 'application/octet-stream' })
      .expect(413);
    expect(refused.body).toMatchObject({ status: 413 });
  });

  it('bytes (octet-stream, image/png) reach the handler as a Blob of the type sent', async () => {
    const answer = await t.api.put('/v1/bytes').set('Content-Type', 'image/png').send(PNG).expect(200);
    expect(answer.body).toEqual({ mediaType: 'image/png', body: { blob: 'image/png', size: PNG.length } });
    expect(
      (
        await t.api
          .put('/v1/bytes')
          .set('Content-Type', 'application/octet-stream')
          .send(Buffer.from([1, 2, 3]))
          .expect(200)
      ).body.body,
    ).toEqual({ blob: 'application/octet-stream', size: 3 });
  });

  it('text/plain reaches the handler as a string, checked against its schema', async () => {
    expect((await t.api.post('/v1/text').set('Content-Type', 'text/plain').send('hello').expect(200)).body).toEqual({ mediaType: 'text/plain', body: 'hello' });
    await t.api.post('/v1/text').set('Content-Type', 'text/plain').send('far too long for it').expect(400);
  });

  it('a media type the operation does not declare is a 415 naming the declared ones; a missing required body a 400', async () => {
    const refused = await t.api.post('/v1/text').set('Content-Type', 'application/xml').send('<a/>').expect(415);
    expect(refused.body).toMatchObject({ code: 'unsupported_media_type', status: 415 });
    expect(refused.body.message).toContain('text/plain');
    expect((await t.api.post('/v1/json').expect(400)).body.message).toMatch(/body is required/);
  });
});

describe('responses', () => {
  it('Accept chooses among the declared media types: JSON by default, CSV when asked', async () => {
    const json = await t.api.get('/v1/export').expect(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body).toEqual([{ name: 'Rex' }]);
    const csv = await t.api.get('/v1/export').set('Accept', 'text/csv').expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.text).toBe('name\nRex\n');
  });

  it('none acceptable: 406 Error object naming what the operation answers with', async () => {
    const refused = await t.api.get('/v1/export').set('Accept', 'application/xml').expect(406);
    expect(refused.body).toMatchObject({ code: 'not_acceptable', status: 406 });
    expect(refused.body.message).toContain('text/csv');
  });

  it('bytes are sent as they are, with their media type', async () => {
    const photo = await t.api
      .get('/v1/photo')
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(photo.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(photo.body as Buffer, PNG)).toBe(0);
  });
});
