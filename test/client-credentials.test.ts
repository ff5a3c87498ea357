/**
 * The typed client presents credentials the way a version's contract
 * declares them (its generated operation table and security schemes): the
 * first requirement the credentials meet, each scheme as it says; nothing for
 * anonymous operations. A recording `fetch` shows what would be sent.
 */
import { createVersionClient } from '../src/client';
import type { ContractSecurity } from '../src/client';
import { operationTable as v1Table, securitySchemes as v1Schemes } from '../generated/v1/operations';

const CONTRACT: ContractSecurity = {
  operationTable: {
    byHeader: { method: 'get', path: '/header', security: [['headerKey']] },
    byQuery: { method: 'get', path: '/query/{id}', security: [['queryKey']] },
    byCookie: { method: 'get', path: '/cookie', security: [['cookieKey']] },
    byBasic: { method: 'post', path: '/basic', security: [['basicKey']] },
    tokenOrKey: { method: 'get', path: '/either', security: [['oauth'], ['headerKey']] },
    both: { method: 'get', path: '/both', security: [['headerKey', 'queryKey']] },
    open: { method: 'get', path: '/open', security: [] },
  },
  securitySchemes: {
    headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    queryKey: { type: 'apiKey', in: 'query', name: 'api_key' },
    cookieKey: { type: 'apiKey', in: 'cookie', name: 'session' },
    basicKey: { type: 'http', scheme: 'basic' },
    oauth: { type: 'oauth2' },
  },
};

/** A client whose fetch records the request it was given and answers 204. */
function recordingClient(credentials: { apiKey?: string; accessToken?: string }, contract: ContractSecurity = CONTRACT) {
  const sent: Request[] = [];
  const fetch = async (input: Request | string | URL, init?: RequestInit) => {
    sent.push(input instanceof Request ? input : new Request(input, init));
    return new Response(null, { status: 204 });
  };
  // Paths of a document only this test knows: none declared to openapi-fetch, the client typed loosely below.
  const client = createVersionClient<Record<string, unknown>>(
    { baseUrl: 'http://api.test/v3', retry: false, idempotencyKeys: false, fetch: fetch as typeof globalThis.fetch, ...credentials },
    contract,
  ) as unknown as {
    GET(path: string, init?: object): Promise<unknown>;
    POST(path: string, init?: object): Promise<unknown>;
  };
  return { client, sent };
}

describe('the client presents the key as each operation declares', () => {
  it('apiKey in a header, the query and a cookie; http basic as base64(key:)', async () => {
    const { client, sent } = recordingClient({ apiKey: 'pas_key' });
    await client.GET('/header');
    await client.GET('/query/{id}', { params: { path: { id: 7 } } });
    await client.GET('/cookie');
    await client.POST('/basic');
    expect(sent[0]!.headers.get('x-api-key')).toBe('pas_key');
    expect(sent[0]!.headers.get('authorization')).toBeNull();
    expect(sent[1]!.url).toBe('http://api.test/v3/query/7?api_key=pas_key');
    expect(sent[2]!.headers.get('cookie')).toBe('session=pas_key');
    expect(sent[3]!.headers.get('authorization')).toBe(`Basic ${Buffer.from('pas_key:').toString('base64')}`);
  });

  it('a list of requirements: the first the credentials meet (a token when given, else the key)', async () => {
    const withToken = recordingClient({ apiKey: 'pas_key', accessToken: 'eyJ.token' });
    await withToken.client.GET('/either');
    expect(withToken.sent[0]!.headers.get('authorization')).toBe('Bearer eyJ.token');
    expect(withToken.sent[0]!.headers.get('x-api-key')).toBeNull();
    const keyOnly = recordingClient({ apiKey: 'pas_key' });
    await keyOnly.client.GET('/either');
    expect(keyOnly.sent[0]!.headers.get('authorization')).toBeNull();
    expect(keyOnly.sent[0]!.headers.get('x-api-key')).toBe('pas_key');
  });

  it('several schemes in one requirement: all of them; an anonymous operation: none', async () => {
    const { client, sent } = recordingClient({ apiKey: 'pas_key' });
    await client.GET('/both');
    await client.GET('/open');
    expect(sent[0]!.headers.get('x-api-key')).toBe('pas_key');
    expect(new URL(sent[0]!.url).searchParams.get('api_key')).toBe('pas_key');
    expect([...sent[1]!.headers.keys()].filter((name) => ['authorization', 'x-api-key', 'cookie'].includes(name))).toEqual([]);
    expect(sent[1]!.url).toBe('http://api.test/v3/open');
  });

  it('v1 as generated: Authorization: Bearer <key>, as before', async () => {
    const { client, sent } = recordingClient({ apiKey: 'pas_key' }, { operationTable: v1Table, securitySchemes: v1Schemes });
    await client.GET('/pets');
    expect(sent[0]!.headers.get('authorization')).toBe('Bearer pas_key');
  });
});

describe('OpenAPI 3.2 methods: an operation called under its typed path is sent with its own method', () => {
  const LIBRARY: ContractSecurity = {
    operationTable: {
      listBooks: { method: 'get', path: '/books', security: [['bearer']] },
      searchBooks: { method: 'query', path: '/books', security: [['headerKey']], typedAs: { path: '/books (QUERY)', method: 'post' } },
      purgeBook: { method: 'purge', path: '/books/{id}', security: [], typedAs: { path: '/books/{id} (PURGE)', method: 'post' } },
    },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
  };

  /** A client with its default middleware (keys on creates, retries); its fetch records each request and answers `statuses` in turn, then 204. */
  function libraryClient(statuses: number[] = []) {
    const sent: Array<{ method: string; url: string; headers: Headers; body: string }> = [];
    const fetch = async (input: Request) => {
      sent.push({ method: input.method, url: input.url, headers: input.headers, body: await input.text() });
      const status = statuses.shift() ?? 204;
      return new Response(null, { status, headers: status === 503 ? { 'Retry-After': '0' } : {} });
    };
    const client = createVersionClient<Record<string, unknown>>(
      { baseUrl: 'http://api.test/v3', apiKey: 'pas_key', retry: { baseDelayMs: 1 }, fetch: fetch as typeof globalThis.fetch },
      LIBRARY,
    ) as unknown as { POST(path: string, init?: object): Promise<unknown> };
    return { client, sent };
  }

  it('QUERY /books with its body and its own credentials (not the first secured operation’s), without an Idempotency-Key', async () => {
    const { client, sent } = libraryClient();
    await client.POST('/books (QUERY)', { body: { title: 'Dune' } });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'QUERY', url: 'http://api.test/v3/books', body: '{"title":"Dune"}' });
    expect(sent[0]!.headers.get('x-api-key')).toBe('pas_key');
    expect(sent[0]!.headers.get('authorization')).toBeNull();
    expect(sent[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('an additional method with a path parameter; an anonymous one carries no key', async () => {
    const { client, sent } = libraryClient();
    await client.POST('/books/{id} (PURGE)', { params: { path: { id: 7 } } });
    expect(sent[0]).toMatchObject({ method: 'PURGE', url: 'http://api.test/v3/books/7' });
    expect(sent[0]!.headers.get('x-api-key')).toBeNull();
    expect(sent[0]!.headers.get('authorization')).toBeNull();
  });

  it('a QUERY is retried on 503 like a GET (it is safe), with the same body', async () => {
    const { client, sent } = libraryClient([503]);
    await client.POST('/books (QUERY)', { body: { title: 'Dune' } });
    expect(sent.map(({ method, body }) => [method, body])).toEqual([
      ['QUERY', '{"title":"Dune"}'],
      ['QUERY', '{"title":"Dune"}'],
    ]);
  });
});
