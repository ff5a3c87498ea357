/**
 * Every `style` and `explode` OpenAPI defines, on a purpose-written document
 * served through the composition root (as v1): each parameter reaches the
 * handler deserialized into its schema's types (integers as numbers, arrays,
 * objects), query, path, header and cookie alike; a value its schema refuses
 * is a 400 naming the parameter; a non-array parameter given twice stays a
 * 400; the integer guard holds inside styled arrays.
 */
import type { OpenApiDocument } from '../src/engine/contract';
import { startTestApp, type TestApp } from './support/test-app';

const ints = { type: 'array', items: { type: 'integer', format: 'int32' } };
const point = { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } };
const q = (name: string, schema: object, style?: string, explode?: boolean) => ({
  name,
  in: 'query',
  schema,
  ...(style && { style }),
  ...(explode !== undefined && { explode }),
});

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'styles', version: '1.0.0' },
  security: [],
  paths: {
    '/query': {
      get: {
        operationId: 'query',
        parameters: [
          q('formExploded', ints),
          q('formFlat', ints, 'form', false),
          q('spaced', ints, 'spaceDelimited', false),
          q('piped', ints, 'pipeDelimited', false),
          q('deep', point, 'deepObject', true),
          q('flatObject', point, 'form', false),
          q('one', { type: 'integer' }),
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/simple/{list}/{obj}/{objExploded}': {
      get: {
        operationId: 'simple',
        parameters: [
          { name: 'list', in: 'path', required: true, schema: ints },
          { name: 'obj', in: 'path', required: true, schema: point },
          { name: 'objExploded', in: 'path', required: true, explode: true, schema: point },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/label/{list}/{listExploded}': {
      get: {
        operationId: 'label',
        parameters: [
          { name: 'list', in: 'path', required: true, style: 'label', schema: ints },
          { name: 'listExploded', in: 'path', required: true, style: 'label', explode: true, schema: ints },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/matrix/{id}/{list}/{obj}': {
      get: {
        operationId: 'matrix',
        parameters: [
          { name: 'id', in: 'path', required: true, style: 'matrix', schema: { type: 'integer' } },
          { name: 'list', in: 'path', required: true, style: 'matrix', explode: true, schema: ints },
          { name: 'obj', in: 'path', required: true, style: 'matrix', schema: point },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/headers-and-cookies': {
      get: {
        operationId: 'headersAndCookies',
        parameters: [
          { name: 'X-Ids', in: 'header', schema: ints },
          { name: 'X-Point', in: 'header', explode: true, schema: point },
          { name: 'page', in: 'cookie', schema: { type: 'integer' } },
          { name: 'tags', in: 'cookie', explode: false, schema: { type: 'array', items: { type: 'string' } } },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
  },
} as unknown as OpenApiDocument;

const echo = async (input: { params: unknown; query: unknown; headers: unknown; cookies: unknown }) => ({
  status: 200,
  body: { params: input.params, query: input.query, headers: input.headers, cookies: input.cookies },
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    versions: [{ name: 'v1', contract: DOCUMENT, handlers: { query: echo, simple: echo, label: echo, matrix: echo, headersAndCookies: echo } as never }],
  });
});
afterAll(() => t.close());

describe('query parameters', () => {
  it.each([
    ['form, exploded (the default): repeated', 'formExploded=1&formExploded=2', { formExploded: [1, 2] }],
    ['form, not exploded: comma-separated', 'formFlat=1,2,3', { formFlat: [1, 2, 3] }],
    ['spaceDelimited', 'spaced=1%202', { spaced: [1, 2] }],
    ['pipeDelimited', 'piped=1|2', { piped: [1, 2] }],
    ['deepObject', 'deep[x]=1&deep[y]=2', { deep: { x: 1, y: 2 } }],
    ['form object, not exploded', 'flatObject=x,1,y,2', { flatObject: { x: 1, y: 2 } }],
    ['a single-valued array (form, exploded)', 'formExploded=7', { formExploded: [7] }],
    ['an empty object (form, not exploded): the name with no value', 'flatObject=', { flatObject: {} }],
  ])('%s', async (_style, query, expected) => {
    expect((await t.api.get(`/v1/query?${query}`).expect(200)).body.query).toEqual(expected);
  });

  it.each([
    ['an item that is not an integer', 'formFlat=1,x', /formFlat/],
    ['an integer beyond int32 inside a styled array', 'piped=1|99999999999', /piped/],
    ['an integer written otherwise than in decimal digits', 'formExploded=1e3', /formExploded/],
    ['a non-array parameter given twice', 'one=1&one=2', /one/],
    ['a parameter the operation does not declare', 'other=1', /other/],
  ])('%s is a 400 naming the parameter', async (_what, query, named) => {
    const refused = await t.api.get(`/v1/query?${query}`).expect(400);
    expect(refused.body).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(refused.body.message).toMatch(named);
  });
});

describe('path parameters', () => {
  it('simple: comma-separated arrays and objects, exploded objects as key=value', async () => {
    expect((await t.api.get('/v1/simple/1,2/x,1,y,2/x=3,y=4').expect(200)).body.params).toEqual({
      list: [1, 2],
      obj: { x: 1, y: 2 },
      objExploded: { x: 3, y: 4 },
    });
  });

  it('label: a leading dot, items after commas or dots', async () => {
    expect((await t.api.get('/v1/label/.1,2/.3.4').expect(200)).body.params).toEqual({ list: [1, 2], listExploded: [3, 4] });
  });

  it('matrix: ;name=value, exploded arrays repeat the name', async () => {
    expect((await t.api.get('/v1/matrix/;id=5/;list=1;list=2/;obj=x,1,y,2').expect(200)).body.params).toEqual({ id: 5, list: [1, 2], obj: { x: 1, y: 2 } });
  });

  it('a value its style or schema refuses is a 400', async () => {
    await t.api.get('/v1/label/1,2/.3.4').expect(400); // no leading dot
    await t.api.get('/v1/matrix/;id=x/;list=1/;obj=x,1,y,2').expect(400);
  });
});

describe('header and cookie parameters', () => {
  it('headers: simple arrays and exploded objects; cookies: form, arrays not exploded', async () => {
    const answer = await t.api
      .get('/v1/headers-and-cookies')
      .set('X-Ids', '1,2')
      .set('X-Point', 'x=1,y=2')
      .set('Cookie', 'page=3; tags=a,b; other=ignored')
      .expect(200);
    // By the names the document declares (and the generated types use).
    expect(answer.body.headers).toEqual({ 'X-Ids': [1, 2], 'X-Point': { x: 1, y: 2 } });
    expect(answer.body.cookies).toEqual({ page: 3, tags: ['a', 'b'] });
  });

  it('a cookie its schema refuses is a 400 naming it', async () => {
    const refused = await t.api.get('/v1/headers-and-cookies').set('Cookie', 'page=three').expect(400);
    expect(refused.body.message).toMatch(/page/);
  });
});
