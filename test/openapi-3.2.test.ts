/**
 * OpenAPI 3.2 served as written (test/fixtures/openapi-3.2/library-3.2.yaml,
 * served as v1 here): the QUERY method, `additionalOperations`, `in:
 * querystring` (form fields and JSON), streams described by `itemSchema`, and
 * what the start refuses by name.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { loadDocument as loadContract } from '@spec-first/engine';
import { tempDir } from './support/paths';
import { startTestApp, testConfig, type TestApp } from './support/test-app';
import { handlers } from '../src/service/handlers';
import { loadSpec } from './support/contracts';
import { compose } from '../src/compose';
import { objectAt } from './support/document-edits';
import { startTestIssuer } from './support/jwks';
import { diffContracts } from '@spec-first/toolchain';
import { notImplementedHandler } from '@spec-first/engine';
import { listenOnFreePort, openRequest, type ListeningServer } from './support/http';

const LIBRARY = 'test/fixtures/openapi-3.2/library-3.2.yaml';
const BOOKS = [
  { id: 1, title: 'Dune' },
  { id: 2, title: 'Emma' },
];

/** What the handlers received, by operation. */
const received = new Map<string, { query: unknown; body: unknown }>();
let feed: () => AsyncIterable<unknown> | Iterable<unknown> = () => [];

const registry = {
  ...handlers,
  searchBooks: async (request: { body: { title: string } }) => {
    received.set('searchBooks', { query: undefined, body: request.body });
    return { status: 200, body: BOOKS.filter((book) => book.title === request.body.title) };
  },
  purgeBooks: async () => ({ status: 204 }),
  findBooks: async (request: { query: unknown }) => {
    received.set('findBooks', { query: request.query, body: undefined });
    return { status: 200, body: BOOKS };
  },
  lookupBooks: async (request: { query: unknown }) => {
    received.set('lookupBooks', { query: request.query, body: undefined });
    return { status: 200, body: BOOKS };
  },
  followBooks: async () => ({ status: 200, body: feed() }),
  exportBooks: async () => ({ status: 200, body: feed() }),
  importBooks: async (request: { body: AsyncIterable<{ id: number; title: string }> }) => {
    let imported = 0;
    for await (const book of request.body) {
      received.set('importBooks', { query: undefined, body: book });
      imported++;
    }
    return { status: 200, body: { imported } };
  },
} as unknown as typeof handlers;

/** One request over its own connection, whatever its method: status, headers and body text. */
async function send(
  server: { url: string },
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const opened = await openRequest(`${server.url}${path}`, { method, headers, ...(body !== undefined && { body }) });
  await opened.ended;
  return { status: opened.response.statusCode!, headers: opened.response.headers, text: opened.text() };
}

describe.each([false, true])('an OpenAPI 3.2 document (strict response validation %s)', (validateResponses) => {
  let t: TestApp;
  let server: ListeningServer;
  beforeAll(async () => {
    t = await startTestApp({ contract: loadSpec(LIBRARY), handlers: registry, settings: { validateResponses } });
    server = await listenOnFreePort(t.app);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  const auth = () => ({ authorization: t.auth });
  const json = { 'content-type': 'application/json' };

  it('tags with a parent: published as written; /docs names each by its path (books › search), after its parent, its summary shown', async () => {
    const published = JSON.parse((await send(server, 'GET', '/openapi/v1.json', {})).text);
    expect(published.tags).toEqual([
      { name: 'books', summary: 'Books', kind: 'nav' },
      { name: 'search', summary: 'Searching books', parent: 'books', kind: 'nav' },
    ]);
    expect(published.paths['/books'].query.tags).toEqual(['search']);
    const docs = JSON.parse((await send(server, 'GET', '/docs/v1.json', {})).text);
    expect(docs.tags).toEqual([
      { name: 'books', summary: 'Books', description: 'Books', kind: 'nav' },
      { name: 'books › search', summary: 'Searching books', description: 'Searching books', kind: 'nav' },
    ]);
    expect(docs.paths['/books'].query.tags).toEqual(['books › search']);
    expect(docs.paths['/books'].additionalOperations.PURGE.tags).toEqual(['books']);
    expect(t.logs()).not.toMatch(/tag\(s\) name a parent/);
  });

  it('QUERY (a method with a body): routed, its body validated by the request validator, answered', async () => {
    const found = await send(server, 'QUERY', '/v1/books', { ...auth(), ...json }, JSON.stringify({ title: 'Dune' }));
    expect(found.status).toBe(200);
    expect(JSON.parse(found.text)).toEqual([BOOKS[0]]);
    expect(received.get('searchBooks')?.body).toEqual({ title: 'Dune' });
    const empty = await send(server, 'QUERY', '/v1/books', { ...auth(), ...json }, JSON.stringify({ title: '' }));
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.text)).toEqual({ code: 'invalid_request', message: 'body.title must NOT have fewer than 1 characters', status: 400 });
    const extra = await send(server, 'QUERY', '/v1/books', { ...auth(), ...json }, JSON.stringify({ title: 'Dune', colour: 'red' }));
    expect(extra.status).toBe(400);
    expect(JSON.parse(extra.text).message).toMatch(/colour/);
    const anonymous = await send(server, 'QUERY', '/v1/books', json, JSON.stringify({ title: 'Dune' }));
    expect(anonymous.status).toBe(401);
  });

  it('additionalOperations: PURGE is routed; a method the path does not declare is a 405 whose Allow lists QUERY and PURGE', async () => {
    expect((await send(server, 'PURGE', '/v1/books', auth())).status).toBe(204);
    const refused = await send(server, 'DELETE', '/v1/books', auth());
    expect(refused.status).toBe(405);
    expect(String(refused.headers['allow']).split(', ').sort()).toEqual(['PURGE', 'QUERY']);
  });

  it('in: querystring, form fields: the whole query string is one object, typed from its schema, handed to the handler as query[name]', async () => {
    const found = await send(server, 'GET', '/v1/books/search?title=Dune&year=1965', auth());
    expect(found.status).toBe(200);
    expect(received.get('findBooks')?.query).toEqual({ filter: { title: 'Dune', year: 1965 } });
    const year = await send(server, 'GET', '/v1/books/search?year=1200', auth());
    expect(year.status).toBe(400);
    expect(JSON.parse(year.text).message).toBe('querystring.filter.year must be >= 1450');
    const unknown = await send(server, 'GET', '/v1/books/search?colour=red', auth());
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text).message).toBe('querystring.filter.colour is not allowed (unknown property)');
    const text = await send(server, 'GET', '/v1/books/search?year=soon', auth());
    expect(JSON.parse(text.text).message).toBe('querystring.filter.year must be integer');
  });

  it('in: querystring, JSON: the query string is one JSON text; not JSON, or breaking its schema, is a 400 naming it', async () => {
    const selector = encodeURIComponent(JSON.stringify({ ids: [1, 2] }));
    expect((await send(server, 'GET', `/v1/books/lookup?${selector}`, auth())).status).toBe(200);
    expect(received.get('lookupBooks')?.query).toEqual({ selector: { ids: [1, 2] } });
    const broken = await send(server, 'GET', '/v1/books/lookup?%7Bids', auth());
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text).message).toBe('querystring.selector is not valid JSON');
    const invalid = await send(server, 'GET', `/v1/books/lookup?${encodeURIComponent('{"ids":["one"]}')}`, auth());
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.text).message).toBe('querystring.selector.ids.0 must be integer');
  });

  it('a request body of JSON Lines reaches the handler as items, each checked against itemSchema; a bad line is a 400 naming it', async () => {
    const jsonl = { 'content-type': 'application/jsonl' };
    const lines = `${BOOKS.map((book) => JSON.stringify(book)).join('\n')}\n`;
    const imported = await send(server, 'POST', '/v1/books/import', { ...auth(), ...jsonl }, lines);
    expect(imported.status).toBe(200);
    expect(JSON.parse(imported.text)).toEqual({ imported: 2 });
    expect(received.get('importBooks')?.body).toEqual(BOOKS[1]);
    const invalid = await send(server, 'POST', '/v1/books/import', { ...auth(), ...jsonl }, `${JSON.stringify(BOOKS[0])}\n{"id":"two","title":"Emma"}\n`);
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.text)).toEqual({ code: 'invalid_request', message: 'body line 2/id must be integer', status: 400 });
    const broken = await send(server, 'POST', '/v1/books/import', { ...auth(), ...jsonl }, '{"id":1,\n');
    expect(JSON.parse(broken.text).message).toBe('body line 1 is not valid JSON');
    const huge = await send(server, 'POST', '/v1/books/import', { ...auth(), ...jsonl }, `{"id":1,"title":"${'x'.repeat(1_100_000)}"}\n`);
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text).message).toBe('body line 1 must not be larger than 1048576 bytes');
  });

  it('a JSON Lines line over the limit is a 413 also when its line feed comes in the read that takes it past the limit', async () => {
    // The line stays within the limit until its last bytes, which arrive with the line feed in a write of their own.
    const line = `{"id":1,"title":"${'x'.repeat(1_048_576)}"}`;
    const cut = 1_048_000;
    const { hostname, port } = new URL(server.url);
    const socket = net.connect(Number(port), hostname);
    const answer = new Promise<string>((resolve, reject) => {
      let received = '';
      socket.on('data', (data) => {
        received += data.toString('latin1');
        if (received.includes('\r\n\r\n')) resolve(received);
      });
      socket.on('error', reject);
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/books/import HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${t.auth}\r\nContent-Type: application/jsonl\r\n` +
        `Content-Length: ${line.length + 1}\r\n\r\n${line.slice(0, cut)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write(`${line.slice(cut)}\n`);
    try {
      expect((await answer).split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      socket.destroy();
    }
  });

  it('streams described by itemSchema: SSE events and JSON Lines records, each item checked against it in strict mode', async () => {
    feed = () => BOOKS;
    const lines = await send(server, 'GET', '/v1/books/export', auth());
    expect(lines.status).toBe(200);
    expect(lines.text).toBe(`${BOOKS.map((book) => JSON.stringify(book)).join('\n')}\n`);
    feed = () => [
      { event: 'book', id: '1', data: JSON.stringify(BOOKS[0]) },
      { event: 'magazine', data: '{}' },
    ];
    const events = await send(server, 'GET', '/v1/books/feed', auth());
    expect(events.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    if (validateResponses) {
      // The second event breaks its item schema (`event` is const "book"): the stream ends there with an error event.
      expect(events.text).toMatch(/^event: book\nid: 1\ndata: \{"id":1,"title":"Dune"\}\n\nevent: error\n/);
      expect((await t.metrics.streamItemViolations.get()).values).toEqual([expect.objectContaining({ labels: { operation: 'followBooks' } })]);
    } else {
      expect(events.text).toContain('event: magazine');
    }
  });
});

describe('oauth2MetadataUrl (3.2): without OAUTH2_JWKS_URL, the key set is found in the authorization server metadata (RFC 8414)', () => {
  it('a token the metadata issuer signed for this audience passes; another issuer, another audience, or none is a 401', async () => {
    const issuer = await startTestIssuer();
    const spec = loadSpec(LIBRARY);
    // The fixture's scheme, its metadata served here; the operation asks for its tokens only.
    objectAt(spec, 'components', 'securitySchemes', 'libraryAuth').oauth2MetadataUrl = issuer.metadataUrl;
    objectAt(spec, 'paths', '/books/search', 'get').security = [{ libraryAuth: ['books:read'] }];
    const oauth2 = { ...testConfig().oauth2, jwksUrl: undefined, issuer: undefined, audience: 'library' };
    const t = await startTestApp({ contract: spec, handlers: registry, settings: { oauth2 } });
    const server = await listenOnFreePort(t.app);
    try {
      expect(t.logs()).not.toContain('needs OAUTH2_JWKS_URL');
      const token = await issuer.sign({ sub: 'reader', iss: issuer.issuer, aud: 'library', scope: 'books:read' });
      expect((await send(server, 'GET', '/v1/books/search?title=Dune', { authorization: `Bearer ${token}` })).status).toBe(200);
      const foreign = await issuer.sign({ sub: 'reader', iss: 'https://elsewhere.example/', aud: 'library', scope: 'books:read' });
      expect((await send(server, 'GET', '/v1/books/search', { authorization: `Bearer ${foreign}` })).status).toBe(401);
      const otherApi = await issuer.sign({ sub: 'reader', iss: issuer.issuer, aud: 'another-api', scope: 'books:read' });
      expect((await send(server, 'GET', '/v1/books/search', { authorization: `Bearer ${otherApi}` })).status).toBe(401);
      expect((await send(server, 'GET', '/v1/books/search', {})).status).toBe(401);
    } finally {
      await server.close();
      await t.close();
      await issuer.close();
    }
  });
});

describe('oauth2MetadataUrl: metadata that cannot be read', () => {
  it('answers 503 (the keys are unavailable, not the token wrong) and is read again for the next token', async () => {
    const issuer = await startTestIssuer();
    // The authorization server's metadata: unavailable at first, then as published.
    let available = false;
    const metadata = await listenOnFreePort((_req, res) => {
      if (!available) res.writeHead(503).end();
      else res.setHeader('content-type', 'application/json').end(JSON.stringify({ issuer: issuer.issuer, jwks_uri: issuer.jwksUrl }));
    });
    const spec = loadSpec(LIBRARY);
    objectAt(spec, 'components', 'securitySchemes', 'libraryAuth').oauth2MetadataUrl = `${metadata.url}/.well-known/oauth-authorization-server`;
    objectAt(spec, 'paths', '/books/search', 'get').security = [{ libraryAuth: [] }];
    const oauth2 = { ...testConfig().oauth2, jwksUrl: undefined, issuer: undefined, audience: 'library' };
    const t = await startTestApp({ contract: spec, handlers: registry, settings: { oauth2 } });
    const server = await listenOnFreePort(t.app);
    try {
      const token = await issuer.sign({ sub: 'reader', iss: issuer.issuer, aud: 'library' });
      expect((await send(server, 'GET', '/v1/books/search', { authorization: `Bearer ${token}` })).status).toBe(503);
      available = true;
      expect((await send(server, 'GET', '/v1/books/search', { authorization: `Bearer ${token}` })).status).toBe(200);
    } finally {
      await server.close();
      await t.close();
      await metadata.close();
      await issuer.close();
    }
  });
});

describe('the rest of 3.2, honoured', () => {
  it('$self is the base of references: one to $self, or to a file in its folder, is read from the document and the files beside it', async () => {
    // Named otherwise here than where $self says it lives, as a designer's copy of a published document is.
    const folder = tempDir();
    mkdirSync(path.join(folder, 'schemas'));
    writeFileSync(
      path.join(folder, 'openapi.yaml'),
      `openapi: 3.2.0
$self: https://example.com/library/library.yaml
info: { title: Self, version: 1.0.0 }
paths:
  /books:
    get:
      responses:
        '200':
          description: The books.
          content:
            application/json:
              schema: { $ref: 'https://example.com/library/library.yaml#/components/schemas/Books' }
  /authors:
    get:
      responses:
        '200':
          description: An author.
          content:
            application/json:
              schema: { $ref: 'https://example.com/library/schemas/author.yaml' }
components:
  schemas:
    Books: { type: array, items: { $ref: 'https://example.com/library/schemas/book.yaml#/Book' } }
`,
    );
    writeFileSync(
      path.join(folder, 'schemas/book.yaml'),
      'Book: { type: object, required: [title], properties: { title: { type: string }, author: { $ref: ./author.yaml } } }\n',
    );
    writeFileSync(path.join(folder, 'schemas/author.yaml'), 'type: object\nproperties: { name: { type: string } }\n');
    const spec = await loadContract(path.join(folder, 'openapi.yaml'));
    const schemaOf = (template: string) => objectAt(spec, 'paths', template, 'get', 'responses', '200', 'content', 'application/json').schema;
    expect(schemaOf('/books')).toEqual({ $ref: '#/components/schemas/Books' });
    expect(schemaOf('/authors')).toEqual({ $ref: '#/components/schemas/author' });
    expect(spec.components?.schemas).toEqual({
      Books: { type: 'array', items: { $ref: '#/components/schemas/Book' } },
      Book: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, author: { $ref: '#/components/schemas/author' } } },
      author: { type: 'object', properties: { name: { type: 'string' } } },
    });
  });

  it('published as written but not acted on, said at start: a deprecated security scheme, a discriminator defaultMapping', async () => {
    const spec = loadSpec(LIBRARY);
    objectAt(spec, 'components', 'securitySchemes', 'bearer').deprecated = true;
    objectAt(spec, 'components', 'schemas').Shelf = {
      oneOf: [{ $ref: '#/components/schemas/Book' }],
      discriminator: { propertyName: 'kind', defaultMapping: '#/components/schemas/Book' },
    };
    const t = await startTestApp({ contract: spec, handlers: registry });
    const server = await listenOnFreePort(t.app);
    try {
      expect(t.logs()).toContain('the security scheme bearer is deprecated: still accepted, and marked deprecated in the published document');
      expect(t.logs()).toContain('1 discriminator defaultMapping(s) (3.2) are not applied');
      const published = JSON.parse((await send(server, 'GET', '/openapi/v1.json', {})).text);
      expect(published.components.securitySchemes.bearer).toMatchObject({ deprecated: true });
      expect(published.components.securitySchemes.bearer.description ?? '').not.toContain('Deprecated');
      // /docs shows it where Swagger UI's Authorize dialog shows a scheme: its description.
      const docs = JSON.parse((await send(server, 'GET', '/docs/v1.json', {})).text);
      expect(docs.components.securitySchemes.bearer).toMatchObject({ deprecated: true, description: expect.stringMatching(/^\*\*Deprecated\.\*\*/) });
    } finally {
      await server.close();
      await t.close();
    }
  });

  it('a request body of JSON text sequences reaches the handler as items; one that does not start with RS is a 400', async () => {
    const spec = loadSpec(LIBRARY);
    objectAt(spec, 'paths', '/books/import', 'post', 'requestBody', 'content')['application/json-seq'] = {
      itemSchema: { $ref: '#/components/schemas/Book' },
    };
    const t = await startTestApp({ contract: spec, handlers: registry });
    const server = await listenOnFreePort(t.app);
    try {
      const seq = { authorization: t.auth, 'content-type': 'application/json-seq' };
      const records = BOOKS.map((book) => `\u001e${JSON.stringify(book)}\n`).join('');
      const imported = await send(server, 'POST', '/v1/books/import', seq, records);
      expect(JSON.parse(imported.text)).toEqual({ imported: 2 });
      const bare = await send(server, 'POST', '/v1/books/import', seq, `${JSON.stringify(BOOKS[0])}\n`);
      expect(bare.status).toBe(400);
      expect(JSON.parse(bare.text).message).toBe('body is not a JSON text sequence: it must start with RS (0x1E)');
      const invalid = await send(server, 'POST', '/v1/books/import', seq, `${records}\u001e{"id":0,"title":"Zero"}\n`);
      expect(JSON.parse(invalid.text).message).toBe('body record 3/id must be >= 1');
    } finally {
      await server.close();
      await t.close();
    }
  });

  it('a request body of Server-Sent Events reaches the handler as items: the data (JSON) or the event, as the item schema describes', async () => {
    const spec = loadSpec(LIBRARY);
    const content = objectAt(spec, 'paths', '/books/import', 'post', 'requestBody', 'content');
    content['text/event-stream'] = { itemSchema: { $ref: '#/components/schemas/Book' } };
    objectAt(spec, 'components', 'schemas').Imported = { type: 'object', required: ['imported'], properties: { imported: { type: 'integer' } } };
    objectAt(spec, 'paths')['/import'] = {
      post: {
        operationId: 'importEvents',
        requestBody: {
          required: true,
          content: {
            'text/event-stream': {
              itemSchema: {
                type: 'object',
                required: ['data', 'event'],
                properties: { data: { type: 'string' }, event: { enum: ['added', 'removed'] }, id: { type: 'string' }, retry: { type: 'integer' } },
              },
            },
          },
        },
        responses: { '200': { description: 'Read.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Imported' } } } } },
      },
      // The other way: events whose item schema describes the data, a Book, whose `id` is not the event's.
      get: {
        operationId: 'feedBooks',
        responses: { '200': { description: 'Books.', content: { 'text/event-stream': { itemSchema: { $ref: '#/components/schemas/Book' } } } } },
      },
    };
    const items: unknown[] = [];
    const collect = async (request: { body: AsyncIterable<unknown> }) => {
      items.length = 0;
      for await (const item of request.body) items.push(item);
      return { status: 200, body: { imported: items.length } };
    };
    const t = await startTestApp({
      contract: spec,
      handlers: { ...registry, importBooks: collect, importEvents: collect, feedBooks: async () => ({ status: 200, body: BOOKS }) } as typeof handlers,
      settings: { validateResponses: true },
    });
    const server = await listenOnFreePort(t.app);
    try {
      const sse = { authorization: t.auth, 'content-type': 'text/event-stream' };
      // Line ends CRLF, LF and CR; a comment; a data field split over two lines; an event of comments only (no item).
      const body = `: a comment\r\nid: 1\r\ndata: {"id":1,\r\ndata: "title":"Dune"}\r\n\r\n: only a comment\n\ndata:{"id":2,"title":"Emma"}\r\r`;
      const imported = await send(server, 'POST', '/v1/books/import', sse, body);
      expect(JSON.parse(imported.text)).toEqual({ imported: 2 });
      expect(items).toEqual(BOOKS);
      expect(items).toEqual(BOOKS);
      const invalid = await send(server, 'POST', '/v1/books/import', sse, `${body}data: {"id":0,"title":"Zero"}\n\n`);
      expect(invalid.status).toBe(400);
      expect(JSON.parse(invalid.text).message).toBe('body event 4/id must be >= 1');
      const events = await send(server, 'POST', '/v1/import', sse, 'event: added\nid: 7\nretry: 500\ndata: Dune\n\nevent: removed\ndata: Emma\n\n');
      expect(events.status).toBe(200);
      expect(items).toEqual([
        { event: 'added', id: '7', retry: 500, data: 'Dune' },
        { event: 'removed', data: 'Emma' },
      ]);
      const feed = await send(server, 'GET', '/v1/import', { authorization: t.auth });
      expect(feed.text).toBe(BOOKS.map((book) => `data: ${JSON.stringify(book)}\n\n`).join(''));
      const unknown = await send(server, 'POST', '/v1/import', sse, 'event: renamed\ndata: Emma\n\n');
      expect(unknown.status).toBe(400);
      expect(JSON.parse(unknown.text).message).toMatch(/^body event 1\/event must be equal to one of the allowed values/);
    } finally {
      await server.close();
      await t.close();
    }
  });

  it("style: cookie: the value as the Cookie header carries it (not percent-decoded); a mock sends an example's serializedValue", async () => {
    const spec = loadSpec(LIBRARY);
    const lookup = objectAt(spec, 'paths', '/books/lookup', 'get');
    lookup.parameters = [...(lookup.parameters as object[]), { name: 'shelf', in: 'cookie', style: 'cookie', schema: { type: 'string' } }];
    objectAt(spec, 'paths', '/books/export', 'get', 'responses', '200', 'content', 'application/jsonl').examples = {
      one: { serializedValue: '{"id":7,"title":"Ulysses"}\n' },
    };
    let cookies: unknown;
    const t = await startTestApp({
      contract: spec,
      handlers: {
        ...registry,
        lookupBooks: async (request: { cookies: unknown }) => {
          cookies = request.cookies;
          return { status: 200, body: BOOKS };
        },
        exportBooks: notImplementedHandler('exportBooks'),
      } as unknown as typeof handlers,
      settings: { mockResponses: true },
    });
    const server = await listenOnFreePort(t.app);
    try {
      expect((await send(server, 'GET', '/v1/books/lookup', { authorization: t.auth, cookie: 'shelf=a%20b' })).status).toBe(200);
      expect(cookies).toEqual({ shelf: 'a%20b' });
      const exported = await send(server, 'GET', '/v1/books/export', { authorization: t.auth });
      expect(exported.text).toBe('{"id":7,"title":"Ulysses"}\n');
    } finally {
      await server.close();
      await t.close();
    }
  });
});

describe('npm run api:diff on OpenAPI 3.2', () => {
  it('sees QUERY and additional operations: removing them is breaking, adding one is not, each told where the document writes it', () => {
    const base = loadSpec(LIBRARY);
    const head = loadSpec(LIBRARY);
    delete (head.paths['/books'] as Record<string, unknown>)['query'];
    (head.paths['/books'] as { additionalOperations: Record<string, unknown> }).additionalOperations['LINK'] = {
      operationId: 'linkBooks',
      responses: { '204': { description: 'Linked.' } },
    };
    const changes = diffContracts(base, head).map((change) => `${change.class} ${change.location} ${change.operation?.method ?? ''}`);
    expect(changes).toEqual(['breaking paths./books.query query', 'non-breaking paths./books.additionalOperations.LINK link']);
  });
});

describe('what an OpenAPI 3.2 document cannot have, refused by name at start', () => {
  it('an additional operation whose method no request can arrive with', async () => {
    const spec = loadSpec(LIBRARY);
    objectAt(spec, 'paths', '/books', 'additionalOperations').BREW = { operationId: 'brewCoffee', responses: { '204': { description: 'Brewed.' } } };
    const t = await startTestApp();
    try {
      await expect(compose(testConfig({ settings: { logLevel: 'silent' } }), { storage: t.storage, contract: spec, handlers: registry })).rejects.toThrow(
        /BREW \/books \(brewCoffee\): no request can arrive with the method BREW: the HTTP server accepts .*QUERY/,
      );
    } finally {
      await t.close();
    }
  });

  it('a querystring parameter in a 3.1 document, or one whose content is neither JSON nor form fields', async () => {
    const spec = loadSpec(LIBRARY);
    objectAt(spec, 'paths', '/books/search', 'get', 'parameters', '0').content = { 'text/plain': { schema: { type: 'string' } } };
    const t = await startTestApp();
    try {
      await expect(compose(testConfig({ settings: { logLevel: 'silent' } }), { storage: t.storage, contract: spec, handlers: registry })).rejects.toThrow(
        /the querystring parameter filter must give its `content` as application\/json or application\/x-www-form-urlencoded/,
      );
      const older = loadSpec(LIBRARY);
      older.openapi = '3.1.1';
      delete (older.paths['/books'] as Record<string, unknown>)['query'];
      delete (older.paths['/books'] as Record<string, unknown>)['additionalOperations'];
      await expect(compose(testConfig({ settings: { logLevel: 'silent' } }), { storage: t.storage, contract: older, handlers: registry })).rejects.toThrow(
        /parameter 0 \(filter\) is in "querystring", which is not a parameter location \(path, query, header, cookie\)/,
      );
    } finally {
      await t.close();
    }
  });
});
