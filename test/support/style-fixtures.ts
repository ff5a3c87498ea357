/**
 * A purpose-written document with every `style` and `explode` OpenAPI
 * defines (query, path, header and cookie), JSON `content` parameters and
 * defaults, and a valid request for each way of writing a value. The
 * parameter-styles suite checks what the handler receives; the request
 * validator suite checks that the validator read the same.
 */
import type { OpenApiDocument } from '@spec-first/engine';

const ints = { type: 'array', items: { type: 'integer', format: 'int32' } };
const point = { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } };
const q = (name: string, schema: object, style?: string, explode?: boolean) => ({
  name,
  in: 'query',
  schema,
  ...(style && { style }),
  ...(explode !== undefined && { explode }),
});

export const STYLES_DOCUMENT = {
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
    '/items/{itemId}': {
      get: {
        operationId: 'item',
        parameters: [
          { name: 'itemId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
          { name: 'ratio', in: 'query', schema: { type: 'number' } },
          { name: 'flag', in: 'query', schema: { type: 'boolean' } },
          { name: 'maybe', in: 'query', schema: { type: ['integer', 'null'] } },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/json': {
      get: {
        operationId: 'json',
        parameters: [
          { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } },
          { name: 'word', in: 'query', content: { 'application/json': { schema: { type: 'string' } } } },
          { name: 'X-Filter', in: 'header', content: { 'application/json': { schema: { type: 'array', items: { type: 'integer' } } } } },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
    '/defaults': {
      get: {
        operationId: 'defaults',
        parameters: [
          { name: 'size', in: 'query', schema: { type: 'integer', default: 10 } },
          { name: 'deep', in: 'query', style: 'deepObject', schema: { type: 'object', properties: { x: { type: 'integer', default: 1 } } } },
        ],
        responses: { '200': { description: 'echo', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
      },
    },
  },
} as unknown as OpenApiDocument;

/** A request to the styles document, with the path parameters the engine reads itself (label, matrix, arrays and objects). */
export interface StyleRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

const get = (url: string, headers: Record<string, string> = {}): StyleRequest => ({ method: 'GET', url: `/v1${url}`, headers });

/** Valid requests, one for each way of writing a value. */
export const STYLE_REQUESTS: readonly StyleRequest[] = [
  get('/query?formExploded=1&formExploded=2'),
  get('/query?formFlat=1,2,3'),
  get('/query?spaced=1%202'),
  get('/query?piped=1|2'),
  get('/query?deep[x]=1&deep[y]=2'),
  get('/query?flatObject=x,1,y,2'),
  get('/query?formExploded=7&one=3'),
  get('/query?flatObject='),
  get('/simple/1,2/x,1,y,2/x=3,y=4'),
  get('/label/.1,2/.3.4'),
  get('/matrix/;id=5/;list=1;list=2/;obj=x,1,y,2'),
  get('/headers-and-cookies', { 'X-Ids': '1,2', 'X-Point': 'x=1,y=2', Cookie: 'page=3; tags=a,b; other=ignored' }),
  get('/items/7?ratio=0.5&flag=true&maybe=3'),
  get('/items/0012?ratio=-1e2&flag=false&maybe='),
  get('/items/3?maybe=null'),
  get(`/json?filter=${encodeURIComponent('{"name":"Rex"}')}&word=${encodeURIComponent('"123"')}`, { 'X-Filter': '[1,2]' }),
  get('/defaults'),
  get('/defaults?deep[x]=2'),
];
