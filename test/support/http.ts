/**
 * HTTP against real servers (spawned by `startServer`, or an app listening on
 * a free port) with every response checked against the contract, as
 * `apiClient` checks supertest's: the responses of `fetch`, of node:http and
 * of raw sockets go through `checkObservedResponse`, hence
 * `assertResponseConforms`. Also the free ports those servers listen on.
 */
import http, { type RequestListener } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { assertResponseConforms, type ConformanceOptions } from './spec-conformance';

/** What a test tells the check: the statuses it expects, the contract the server serves. */
export interface CheckOptions {
  /** Statuses the test expects: a 5xx passes the check only when listed (the status itself is not asserted). */
  expect?: number[];
  /** The contract the server serves; openapi/v1/openapi.yaml by default (a project copy's own, for instance). */
  contract?: ConformanceOptions['contract'];
}

/** A response as the test sees it once the check passed. */
export interface CheckedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The body text ('' when none). */
  text: string;
  /** The parsed body when the content-type is JSON, else undefined. */
  body: unknown;
  /** The original response (its body already read). */
  response: Response;
}

/**
 * Checks one response, whatever client received it: parses the body when the
 * content-type is JSON (a JSON content-type with a body that does not parse
 * fails), runs `assertResponseConforms`, and returns the parsed body.
 *
 * @example
 * const body = checkObservedResponse({ method: 'GET', url: '/v1/pets', status: res.statusCode!, headers: res.headers, text });
 */
export function checkObservedResponse(
  observed: { method: string; url: string; status: number; headers: Record<string, string | string[] | undefined>; text: string },
  options: CheckOptions = {},
): unknown {
  const contentType = String(observed.headers['content-type'] ?? '');
  let body: unknown;
  if (/^application\/([\w.-]+\+)?json\b/i.test(contentType) && observed.text !== '') {
    try {
      body = JSON.parse(observed.text);
    } catch {
      throw new Error(
        `response breaks the contract: ${observed.method.toUpperCase()} ${observed.url} -> ${observed.status}: ` +
          `content-type is ${contentType} but the body is not JSON: ${observed.text.slice(0, 200)}`,
      );
    }
  }
  assertResponseConforms({ ...observed, body }, { expectedStatuses: new Set(options.expect ?? []), ...(options.contract && { contract: options.contract }) });
  return body;
}

/** The request target (path and query) of an absolute URL. */
const targetOf = (url: string): string => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};

/** Reads `response` (a clone when the caller still needs the body) and checks it as the answer to `method` `url`. */
async function checkFetched(method: string, url: string, response: Response, options: CheckOptions): Promise<Omit<CheckedResponse, 'response'>> {
  const text = await response.text();
  const headers = Object.fromEntries(response.headers); // Headers yields lower-case names
  // After a redirect the response is the last URL's.
  const body = checkObservedResponse({ method, url: targetOf(response.url || url), status: response.status, headers, text }, options);
  return { status: response.status, headers, text, body };
}

/**
 * `fetch`, with the response checked against the contract before the test
 * sees it: the body is read once (text, and JSON when the content-type is
 * JSON). A 5xx fails unless the test lists it in `expect`.
 *
 * @example
 * const res = await checkedFetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
 * expect(res.status).toBe(200);
 * const down = await checkedFetch(`${server.url}/readyz`, undefined, { expect: [503] });
 */
export async function checkedFetch(url: string, init?: RequestInit, options: CheckOptions = {}): Promise<CheckedResponse> {
  const response = await fetch(url, init);
  return { ...(await checkFetched(init?.method ?? 'GET', url, response, options)), response };
}

/** A `fetch` that checks every response, and keeps the breaches it found. */
export type CheckingFetch = typeof fetch & {
  /** Every breach found so far, thrown or not: a caller that catches errors (a retrying client) cannot hide one. */
  breaches: Error[];
};

/**
 * A drop-in `fetch` (for clients that take one, such as the typed client)
 * that checks every response against the contract and hands the caller the
 * response unread. A breach is thrown and also kept in `breaches`: assert
 * that it is empty at the end, since a client may retry on any error.
 *
 * @example
 * const checking = checkingFetch();
 * const client = createPetAdoptionClient({ baseUrl, apiKey, fetch: checking });
 * // ...
 * expect(checking.breaches.map(String)).toEqual([]);
 */
export function checkingFetch(options: CheckOptions = {}): CheckingFetch {
  const breaches: Error[] = [];
  const checking: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    try {
      await checkFetched(request.method, request.url, response.clone(), options);
    } catch (error) {
      breaches.push(error as Error);
      throw error;
    }
    return response;
  };
  return Object.assign(checking, { breaches });
}

/** A server listening on 127.0.0.1, and how to reach and stop it. */
export interface ListeningServer {
  server: http.Server;
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  /** Stops listening and closes every connection, idle or not (a hung request does not hold it open). */
  close(): Promise<void>;
}

/**
 * Serves `listener` (an Express app or any request listener) on a free port
 * of 127.0.0.1.
 *
 * @example
 * const { url, close } = await listenOnFreePort(t.app);
 * try { await checkedFetch(`${url}/healthz`); } finally { await close(); }
 */
export async function listenOnFreePort(listener: RequestListener): Promise<ListeningServer> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A TCP port of 127.0.0.1 that was free a moment ago (for a process the test
 * starts: a private PostgreSQL or Redis).
 *
 * @example const port = await freePort();
 */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A response read as it arrives. */
export interface OpenedResponse {
  response: http.IncomingMessage;
  /** Everything read so far. */
  text(): string;
  /** Resolves when the body ended: `complete` (its last chunk came) or `aborted` (the connection closed before it). */
  ended: Promise<'complete' | 'aborted'>;
  /** Drops the connection (a client that goes away). */
  close(): void;
}

/**
 * One request over a connection of its own, with any method (QUERY, PURGE),
 * its response read as it arrives; `read: false` leaves it unread (a client
 * that stopped reading). Not checked against the contract: the tests of
 * streams judge the bytes themselves, cut ones included.
 *
 * @example const opened = await openRequest(`${url}/v2/pets/export`, { headers: { authorization } }); await opened.ended;
 */
export function openRequest(
  url: string,
  { method = 'GET', headers = {}, body, read = true }: { method?: string; headers?: Record<string, string>; body?: string; read?: boolean } = {},
): Promise<OpenedResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false }, (response) => {
      let text = '';
      const ended = new Promise<'complete' | 'aborted'>((done) => {
        response.on('end', () => done('complete'));
        response.on('aborted', () => done('aborted'));
        response.on('error', () => done('aborted'));
      });
      if (read) response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      else response.pause();
      resolve({ response, text: () => text, ended, close: () => request.destroy() });
    });
    request.on('error', reject);
    request.end(body);
  });
}
