/**
 * Every `style` and `explode` OpenAPI defines, on a purpose-written document
 * served through the composition root (as v1): each parameter reaches the
 * handler deserialized into its schema's types (integers as numbers, arrays,
 * objects), query, path, header and cookie alike; a value its schema refuses
 * is a 400 naming the parameter; a non-array parameter given twice stays a
 * 400; the integer guard holds inside styled arrays.
 */
import { STYLES_DOCUMENT as DOCUMENT } from './support/style-fixtures';
import { startTestApp, type TestApp } from './support/test-app';

const echo = async (input: { params: unknown; query: unknown; headers: unknown; cookies: unknown }) => ({
  status: 200,
  body: { params: input.params, query: input.query, headers: input.headers, cookies: input.cookies },
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    versions: [
      { name: 'v1', contract: DOCUMENT, handlers: { query: echo, simple: echo, label: echo, matrix: echo, headersAndCookies: echo, item: echo } as never },
    ],
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

describe('numbers, booleans and null', () => {
  it('decimal numbers, booleans and null reach the handler typed; an empty value is null where no text is allowed', async () => {
    expect((await t.api.get('/v1/items/7?ratio=-1e2&flag=true&maybe=').expect(200)).body.query).toEqual({ ratio: -100, flag: true, maybe: null });
  });

  it.each(['%205', '0x10', 'Infinity', '1e999'])('a number written as %s (JavaScript reads it, nobody writes it) is a 400 naming it', async (ratio) => {
    const refused = await t.api.get(`/v1/items/7?ratio=${ratio}`).expect(400);
    expect(refused.body.message).toBe('query.ratio must be a number written in decimal digits');
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
