/**
 * The brief's sentence, proved: express-openapi-validator enforces the limit
 * bounds, the PetStatus enum and required fields, answering with the Error
 * object. The same requests are sent with the validator and with a stand-in
 * that lets everything through (jest.doMock, so product code has no switch):
 * with it they are today's 400s, word for word; without it they are not 400.
 *
 * Then the two readers of a parameter agree: for every parameter fixture
 * (every style, and a third-party document's), the values the validator
 * checked, after its own coercion and defaults, are the values the handler
 * received, and its coercion never reaches the handler.
 */
import path from 'node:path';
import request from 'supertest';
import { loadDocument as loadContract, type OpenApiDocument } from '@spec-first/engine';
import type * as TestAppModule from './support/test-app';
import { dereferencedDocument, operationsOf, validRequest } from './support/document-requests';
import { STYLES_DOCUMENT, STYLE_REQUESTS } from './support/style-fixtures';

type Start = typeof TestAppModule.startTestApp;
type Handled = { params: Record<string, unknown>; query: Record<string, unknown>; headers: Record<string, unknown>; cookies: Record<string, unknown> };
interface SeenByValidator {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  cookies: Record<string, unknown>;
}

/** The app, composed with `express-openapi-validator` replaced by `factory` (or the real one), in a module registry of its own. */
function startWith(factory: (() => unknown) | undefined): Start {
  let start: Start | undefined;
  jest.isolateModules(() => {
    if (factory) jest.doMock('express-openapi-validator', factory);
    start = (require('./support/test-app') as typeof TestAppModule).startTestApp;
  });
  return start!;
}

const briefRequests = (app: Parameters<typeof request>[0], auth: string): Array<[string, request.Test, string]> => [
  ['limit=0', request(app).get('/v1/pets?limit=0').set('Authorization', auth), 'query.limit must be >= 1'],
  ['limit=101', request(app).get('/v1/pets?limit=101').set('Authorization', auth), 'query.limit must be <= 100'],
  [
    'status=lost',
    request(app).get('/v1/pets?status=lost').set('Authorization', auth),
    'query.status must be equal to one of the allowed values: available, pending, sold',
  ],
  ['a body without name', request(app).post('/v1/pets').set('Authorization', auth).send({ status: 'available' }), 'body.name is required'],
];

describe('express-openapi-validator enforces the limit bounds, the PetStatus enum and required fields', () => {
  it('with it: 400 and the Error object, in the words of today', async () => {
    const t = await startWith(undefined)();
    try {
      for (const [, sent, message] of briefRequests(t.app, t.auth)) {
        const res = await sent;
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { code: 'invalid_request', status: 400, message } });
      }
    } finally {
      await t.close();
    }
  });

  it('without it (a stand-in that lets every request through): none of those requests is refused', async () => {
    const passThrough = () => ({ middleware: () => [(_req: unknown, _res: unknown, next: () => void) => next()] });
    const t = await startWith(passThrough)();
    try {
      for (const [what, sent] of briefRequests(t.app, t.auth)) {
        const res = await sent;
        expect({ what, status: res.status }).not.toEqual({ what, status: 400 });
      }
    } finally {
      await t.close();
    }
  });
});

/**
 * The real validator with one middleware of the test after its own: the
 * request it passed on, which holds what it checked, after its own coercion.
 */
function recordingValidator(seen: SeenByValidator[]) {
  return () => {
    const real = jest.requireActual<typeof import('express-openapi-validator')>('express-openapi-validator');
    // Runs after the validator's own middlewares, only when they all passed the request on.
    const record = (req: unknown, _res: unknown, next: () => void): void => {
      const view = req as {
        params: Record<string, unknown>;
        query: Record<string, unknown>;
        headers: Record<string, unknown>;
        cookies: Record<string, unknown>;
        body: unknown;
      };
      // The parameter check is shown no body; the body check comes after it.
      if (view.body === undefined)
        seen.push({ params: { ...view.params }, query: { ...view.query }, headers: { ...view.headers }, cookies: { ...view.cookies } });
      next();
    };
    return { ...real, middleware: (options: Parameters<typeof real.middleware>[0]) => [...real.middleware(options), record] };
  };
}

interface Pair {
  url: string;
  status: number;
  validator: SeenByValidator | undefined;
  handler: Handled | undefined;
  /** The path parameters the validator reads (it matches them itself): primitives in simple style, or JSON content. */
  readByValidator: string[];
}

/** Read from the document, apart from the server's code: the operation a request is for, and its path parameters the validator reads. */
function pathParametersReadByValidator(document: OpenApiDocument, sent: { method: string; url: string }): string[] {
  const target = sent.url.replace(/^\/v1/, '').split('?')[0]!;
  for (const [template, item] of Object.entries(document.paths ?? {}) as Array<[string, Record<string, unknown>]>) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
    const operation = item[sent.method.toLowerCase()] as { parameters?: Array<Record<string, unknown>> } | undefined;
    if (!operation || !pattern.test(target)) continue;
    const declared = [...((item['parameters'] as Array<Record<string, unknown>> | undefined) ?? []), ...(operation.parameters ?? [])];
    return declared
      .filter((parameter) => parameter['in'] === 'path')
      .filter((parameter) => {
        if (parameter['content']) return true;
        const type = (parameter['schema'] as { type?: unknown } | undefined)?.type;
        return (parameter['style'] ?? 'simple') === 'simple' && type !== 'array' && type !== 'object';
      })
      .map((parameter) => String(parameter['name']));
  }
  throw new Error(`no operation of the document matches ${sent.method} ${sent.url}`);
}

const lowerKeys = (values: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key.toLowerCase(), value]));

/** Serves `document` as v1 with every operation recording its input, and sends each request; returns what the validator and the handler each had. */
async function readBoth(document: OpenApiDocument, requests: ReadonlyArray<{ method: string; url: string; headers: Record<string, string> }>) {
  const seen: SeenByValidator[] = [];
  const handled: Handled[] = [];
  const record = async (input: Handled) => {
    handled.push(structuredClone({ params: input.params, query: input.query, headers: input.headers, cookies: input.cookies }));
    return { status: 204 };
  };
  const handlers = new Proxy({}, { get: () => record, has: () => true });
  const t = await startWith(recordingValidator(seen))({ versions: [{ name: 'v1', contract: document, handlers: handlers as never }] });
  const pairs: Pair[] = [];
  try {
    for (const sent of requests) {
      seen.length = 0;
      handled.length = 0;
      let test = request(t.app)[sent.method.toLowerCase() as 'get'](sent.url);
      for (const [name, value] of Object.entries(sent.headers)) test = test.set(name, value);
      const res = await test;
      if (res.status !== 204) console.log(sent.url, res.status, res.text);
      pairs.push({
        url: sent.url,
        status: res.status,
        validator: seen[0],
        handler: handled[0],
        readByValidator: pathParametersReadByValidator(document, sent),
      });
    }
  } finally {
    await t.close();
  }
  return pairs;
}

/** What the handler received of the parameters the validator read: the query, headers and cookies, and the path parameters it matched itself. */
function expectAgreement(pair: Pair): void {
  expect({ url: pair.url, status: pair.status }).toEqual({ url: pair.url, status: 204 });
  const handler = pair.handler!;
  const handlerHeaders = lowerKeys(handler.headers);
  // No check at all only where the operation has nothing the validator reads.
  const validator = pair.validator ?? { params: {}, query: {}, headers: {}, cookies: {} };
  if (!pair.validator)
    expect({ url: pair.url, query: handler.query, headers: handlerHeaders, cookies: handler.cookies, path: pair.readByValidator }).toEqual({
      url: pair.url,
      query: {},
      headers: {},
      cookies: {},
      path: [],
    });
  // Every value the handler received is the value the validator checked; what the validator filled in for itself (defaults of absent parameters) it kept.
  expect({ url: pair.url, query: pick(validator.query, handler.query) }).toEqual({ url: pair.url, query: handler.query });
  expect({ url: pair.url, cookies: pick(validator.cookies, handler.cookies) }).toEqual({ url: pair.url, cookies: handler.cookies });
  expect({ url: pair.url, headers: pick(lowerKeys(validator.headers), handlerHeaders) }).toEqual({ url: pair.url, headers: handlerHeaders });
  // The path parameters the validator reads (primitives in simple style) it matches itself, from the path.
  for (const name of pair.readByValidator) {
    expect({ url: pair.url, name, value: validator.params[name] }).toEqual({ url: pair.url, name, value: handler.params[name] });
  }
}

/** `values` restricted to the names `like` has. */
const pick = (values: Record<string, unknown>, like: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.keys(like).map((name) => [name, values[name]]));

describe('the engine and the validator read the same values, and the validator changes none the handler receives', () => {
  it('every style of the style fixtures', async () => {
    const pairs = await readBoth(STYLES_DOCUMENT, STYLE_REQUESTS);
    expect(pairs.length).toBe(STYLE_REQUESTS.length);
    for (const pair of pairs) expectAgreement(pair);
    // The validator's defaults stay its own: an absent parameter with a default is the default in both, and nothing else is added.
    const defaults = pairs.find((pair) => pair.url === '/v1/defaults')!;
    expect(defaults.handler!.query).toEqual({ size: 10 });
    expect(defaults.validator!.query).toMatchObject({ size: 10, deep: { x: 1 } });
  });

  it("a third-party document's parameter styles (readme-parameters-style-3.0.yaml), each operation with a valid request", async () => {
    const file = path.join(__dirname, 'fixtures', 'third-party', 'readme-parameters-style-3.0.yaml');
    const contract = await loadContract(file);
    const document = await dereferencedDocument(file);
    const requests = operationsOf(document).map((op) => validRequest(document, '', { ...op }, undefined));
    const pairs = await readBoth(
      { ...contract, security: [] } as OpenApiDocument,
      requests.map((sent) => ({ ...sent, url: `/v1${sent.url}` })),
    );
    const withParameters = pairs.filter((pair) => pair.validator !== undefined);
    expect(withParameters.length).toBeGreaterThan(5);
    for (const pair of pairs) expectAgreement(pair);
  });
});
