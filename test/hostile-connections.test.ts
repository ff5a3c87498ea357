/**
 * Hostile clients at the connection and request level, against the real
 * entry point (src/server.ts) over real sockets: slow clients, connection
 * floods, oversized and malformed requests. Each case also checks that a
 * normal client is still answered within a normal latency.
 */
import http from 'node:http';
import net from 'node:net';
import express from 'express';
import { startServer, runServerToExit, type RunningServer } from './support/processes';
import { createKeyWithCli, isolatedServerEnv } from './support/server-env';
import { rawExchange, timedGet, type RawResult } from './support/raw-http';
import { checkObservedResponse } from './support/http';
import { loadConfig } from '../src/config';
import { createHttpServer, MAX_HEADER_BYTES } from '../src/runtime';

/** A normal request on a fresh connection, well within this noisy machine's latency. */
const NORMAL_LATENCY_MS = 1_500;

async function expectOthersServed(server: RunningServer, key: string): Promise<void> {
  const { status, ms } = await timedGet(`${server.url}/v1/pets?limit=1`, { Authorization: `Bearer ${key}` }, { check: true });
  expect(status).toBe(200);
  expect(ms).toBeLessThan(NORMAL_LATENCY_MS);
}

/** While `attack` runs, a normal client is answered every 200 ms within NORMAL_LATENCY_MS. */
async function servedDuring<T>(server: RunningServer, key: string, attack: Promise<T>): Promise<T> {
  let done = false;
  const latencies: number[] = [];
  const probing = (async () => {
    while (!done && latencies.length < 100) {
      const { status, ms } = await timedGet(`${server.url}/v1/pets?limit=1`, { Authorization: `Bearer ${key}` }, { check: true });
      expect(status).toBe(200);
      latencies.push(ms);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const result = await attack.finally(() => (done = true));
  await probing;
  expect(latencies.length).toBeGreaterThan(0);
  expect(Math.max(...latencies)).toBeLessThan(NORMAL_LATENCY_MS);
  return result;
}

/** A 4xx Error object whose code and status match, sent with Connection: close (Node's parser-level refusals). */
function expectErrorObject(result: RawResult, status: number, code: string): void {
  expect(result.status).toBe(status);
  expect(result.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(result.text)).toEqual({ code, status, message: expect.any(String) });
  // Every answer carries a request id, those written below Express included.
  expect(result.headers['x-request-id']).toMatch(/^[\x21-\x7E]{1,128}$/);
}

const KEY_HEADER = (key: string) => `Authorization: Bearer ${key}\r\n`;

describe('slow clients are disconnected within the configured timeouts', () => {
  let server: RunningServer;
  let key: string;
  beforeAll(async () => {
    const env = { ...isolatedServerEnv(), NODE_ENV: 'production', HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '2', KEEP_ALIVE_TIMEOUT_SECONDS: '1' };
    server = await startServer(env);
    key = createKeyWithCli(env, '--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000');
  });
  afterAll(() => server.stop());

  it('slowloris: 30 clients trickling their headers get 408 and are closed after ~1 s, others are served meanwhile', async () => {
    const trickle = Array.from({ length: 30 }, () =>
      rawExchange(server.port, {
        chunks: ['GET /v1/pets HTTP/1.1\r\n', 'Host: x\r\n', ...Array.from({ length: 60 }, (_, i) => `X-Slow-${i}: y\r\n`)],
        gapMs: 200,
        deadlineMs: 10_000,
      }),
    );
    const results = await servedDuring(server, key, Promise.all(trickle));
    for (const result of results) {
      // headersTimeout 1 s, checked every second: closed within 1-2 s (margin for this machine).
      expect(result.closedAfterMs).toBeGreaterThanOrEqual(900);
      expect(result.closedAfterMs).toBeLessThan(4_000);
      expectErrorObject(result, 408, 'request_timeout');
    }
  });

  it('a connection that sends nothing is closed after the headers timeout', async () => {
    const result = await rawExchange(server.port, { chunks: [], deadlineMs: 10_000 });
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(result.closedAfterMs).toBeLessThan(4_000);
  });

  it('slow body: a body trickled one byte at a time gets 408 and is closed after ~2 s, others are served meanwhile', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(100), categoryId: 1 });
    const attack = rawExchange(server.port, {
      chunks: [
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        ...body.split(''),
      ],
      gapMs: 100,
      deadlineMs: 15_000,
    });
    const result = await servedDuring(server, key, attack);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(1_900);
    expect(result.closedAfterMs).toBeLessThan(5_000);
    expectErrorObject(result, 408, 'request_timeout');
    // Nothing half-received was stored.
    const listed = await timedGet(`${server.url}/v1/pets?limit=100`, { Authorization: `Bearer ${key}` }, { check: true });
    expect(listed.text).not.toContain('x'.repeat(100));
  });

  it('Content-Length larger than the body sent: 408 and closed after the request timeout', async () => {
    const result = await rawExchange(server.port, {
      chunks: [`POST /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`],
      deadlineMs: 10_000,
    });
    expect(result.closedAfterMs).toBeLessThan(5_000);
    expectErrorObject(result, 408, 'request_timeout');
    await expectOthersServed(server, key);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const result = await rawExchange(server.port, {
      chunks: [`GET /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}\r\n`],
      deadlineMs: 10_000,
    });
    expect(result.status).toBe(200);
    // 1 s plus Node's keep-alive buffer (1 s), with margin.
    expect(result.closedAfterMs).toBeLessThan(4_500);
  });
});

describe('the limits are configurable, validated, and bounded by default', () => {
  it('defaults: headers within 10 s, whole request within 20 s, keep-alive 5 s, 1024 connections, 16 KiB of headers', () => {
    const server = createHttpServer(express(), loadConfig({}).httpLimits);
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(20_000);
    expect(server.keepAliveTimeout).toBe(5_000);
    expect(server.maxConnections).toBe(1024);
    expect((server as { maxHeaderSize?: number }).maxHeaderSize).toBe(MAX_HEADER_BYTES);
    server.close();
  });

  it.each([
    [{ HEADERS_TIMEOUT_SECONDS: '0' }, /HEADERS_TIMEOUT_SECONDS/],
    [{ REQUEST_TIMEOUT_SECONDS: 'soon' }, /REQUEST_TIMEOUT_SECONDS/],
    [{ KEEP_ALIVE_TIMEOUT_SECONDS: '-1' }, /KEEP_ALIVE_TIMEOUT_SECONDS/],
    [{ MAX_CONNECTIONS: '1.5' }, /MAX_CONNECTIONS/],
    [{ HEADERS_TIMEOUT_SECONDS: '30', REQUEST_TIMEOUT_SECONDS: '20' }, /HEADERS_TIMEOUT_SECONDS: must not be greater than REQUEST_TIMEOUT_SECONDS/],
  ])('refuses to start with %j', (env, message) => {
    const result = runServerToExit(env as Record<string, string>);
    expect(result.status).toBe(1);
    expect(result.output).toMatch(message);
  });
});

describe('a flood of connections is capped per process', () => {
  let server: RunningServer;
  let key: string;
  beforeAll(async () => {
    const env = { ...isolatedServerEnv(), NODE_ENV: 'production', MAX_CONNECTIONS: '20' };
    server = await startServer(env);
    key = createKeyWithCli(env, '--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000');
  });
  afterAll(() => server.stop());

  it('sockets over MAX_CONNECTIONS are closed at once; a connected keep-alive client is still served; new clients are served after the flood', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; ms: number }>((resolve, reject) => {
        const started = Date.now();
        http
          .get(`${server.url}/v1/pets?limit=1`, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => {
              const ms = Date.now() - started;
              try {
                checkObservedResponse({ method: 'GET', url: '/v1/pets?limit=1', status: res.statusCode!, headers: res.headers, text });
                resolve({ status: res.statusCode!, ms });
              } catch (error) {
                reject(error);
              }
            });
          })
          .on('error', reject);
      });
    expect((await get()).status).toBe(200); // the keep-alive client holds one of the 20

    // 60 connections that never send a byte: 19 fit, the other 41 are closed as soon as accepted.
    const flood: net.Socket[] = [];
    const closedAfter: number[] = [];
    await Promise.all(
      Array.from(
        { length: 60 },
        () =>
          new Promise<void>((resolve) => {
            const started = Date.now();
            const socket = net.connect(server.port, '127.0.0.1');
            flood.push(socket);
            socket.on('error', () => undefined);
            socket.on('close', () => closedAfter.push(Date.now() - started));
            socket.on('connect', () => resolve());
            setTimeout(resolve, 2_000);
          }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    try {
      expect(closedAfter).toHaveLength(41);
      expect(Math.max(...closedAfter)).toBeLessThan(1_500);
      const kept = await get();
      expect(kept.status).toBe(200);
      expect(kept.ms).toBeLessThan(NORMAL_LATENCY_MS);
      // A new client during the flood is refused: the cap is reached.
      await expect(timedGet(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      for (const socket of flood) socket.destroy();
      agent.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expectOthersServed(server, key);
  });
});

describe('one client cannot hold every connection (MAX_CONNECTIONS_PER_CLIENT, counted by the socket peer)', () => {
  const PER_CLIENT = 10;
  let server: RunningServer;
  beforeAll(async () => {
    // TRUST_PROXY on: the count is still by the socket's peer, whatever X-Forwarded-For says.
    const env = { ...isolatedServerEnv(), NODE_ENV: 'production', MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT), TRUST_PROXY: 'loopback' };
    server = await startServer(env);
  });
  afterAll(() => server.stop());

  /** A socket from `localAddress` that sends a partial request line and never finishes it; resolves once connected, records when it closed. */
  const partialRequest = (localAddress: string) =>
    new Promise<{ socket: net.Socket; closed: Promise<number>; received: () => number }>((resolve, reject) => {
      const socket = net.connect({ port: server.port, host: '127.0.0.1', localAddress });
      let bytes = 0;
      const opened = Date.now();
      const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - opened)));
      socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
      socket.on('error', () => undefined);
      socket.once('connect', () => {
        socket.write('GET /v1/pets?limit=1 HTT');
        resolve({ socket, closed, received: () => bytes });
      });
      setTimeout(() => reject(new Error('no connection within 2 s')), 2_000).unref();
    });
  const getFrom = (localAddress: string) =>
    new Promise<number>((resolve, reject) => {
      http
        .get(`${server.url}/healthz`, { agent: false, localAddress, headers: { 'X-Forwarded-For': '198.51.100.1' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        })
        .on('error', reject);
    });

  it('the limit plus one sockets from one address: the extra one is closed at once, unanswered; another address is still answered', async () => {
    const held = await Promise.all(Array.from({ length: PER_CLIENT }, () => partialRequest('127.0.0.2')));
    try {
      const extra = await partialRequest('127.0.0.2');
      const closedAfter = await Promise.race([extra.closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 2_000))]);
      expect(closedAfter).toBeLessThan(1_000);
      expect(extra.received()).toBe(0);
      // The same address is refused while it holds its slots, whatever X-Forwarded-For it sends; another is answered.
      await expect(getFrom('127.0.0.2')).rejects.toThrow();
      const started = Date.now();
      expect(await getFrom('127.0.0.3')).toBe(200);
      expect(Date.now() - started).toBeLessThan(NORMAL_LATENCY_MS);
      // The held sockets are still open: the cap closes only the excess.
      for (const { socket } of held) expect(socket.destroyed).toBe(false);
    } finally {
      for (const { socket } of held) socket.destroy();
    }
    await Promise.all(held.map(({ closed }) => closed));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Slots freed: the address is served again.
    expect(await getFrom('127.0.0.2')).toBe(200);
  });

  it('defaults to 128 per client, and refuses a setting that is not a positive integer', () => {
    expect(loadConfig({}).httpLimits.maxConnectionsPerClient).toBe(128);
    const result = runServerToExit({ MAX_CONNECTIONS_PER_CLIENT: '0' });
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/MAX_CONNECTIONS_PER_CLIENT/);
  });
});

describe('oversized and odd requests: a clear 4xx Error object or a closed connection, never a 5xx or a hang', () => {
  let server: RunningServer;
  let key: string;
  beforeAll(async () => {
    const env = { ...isolatedServerEnv(), NODE_ENV: 'production', HEADERS_TIMEOUT_SECONDS: '2', REQUEST_TIMEOUT_SECONDS: '2' };
    server = await startServer(env);
    key = createKeyWithCli(env, '--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000');
  });
  afterAll(() => server.stop());
  afterEach(() => expectOthersServed(server, key));

  const send = (chunks: (string | Buffer)[]) => rawExchange(server.port, { chunks, deadlineMs: 8_000 });
  const get = (target: string, extraHeaders = '') => send([`GET ${target} HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}${extraHeaders}Connection: close\r\n\r\n`]);
  const post = (body: string | Buffer, extraHeaders = 'Content-Type: application/json\r\n') =>
    send([
      Buffer.concat([
        Buffer.from(
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}${extraHeaders}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        ),
        Buffer.from(body),
      ]),
    ]);
  /** An answer of the app itself: an Error object with this status (rawExchange checked it against the contract, rate-limit headers included). */
  const expectAppError = (result: RawResult, status: number, code: string, message?: RegExp) => {
    expectErrorObject(result, status, code);
    if (message) expect(JSON.parse(result.text).message).toMatch(message);
  };

  it('headers over 16 KiB: 431 headers_too_large, closed', async () => {
    const result = await get('/v1/pets', `X-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n`);
    expectErrorObject(result, 431, 'headers_too_large');
    expect(result.closedAfterMs).toBeDefined();
  });

  it('a URL over 8 KiB: 414 uri_too_long (with the rate-limit headers); over 16 KiB: 431, closed', async () => {
    const long = `/v1/pets?status=${'a'.repeat(9_000)}`;
    expectAppError(await get(long), 414, 'uri_too_long');
    expectErrorObject(await get(`/healthz?${'a'.repeat(9_000)}`), 414, 'uri_too_long');
    const huge = await get(`/v1/pets?status=${'a'.repeat(MAX_HEADER_BYTES)}`);
    expectErrorObject(huge, 431, 'headers_too_large');
    expect(huge.closedAfterMs).toBeDefined();
    // Just under the limit is routed as usual (here: an unknown parameter).
    expectAppError(await get(`/v1/pets?x=${'a'.repeat(8_000)}`), 400, 'invalid_request');
  });

  it.each([
    ['10,000 nested arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['100,000 nested objects in a field', `{"name":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)},"categoryId":1}`],
    ['300,000 nested arrays (about 600 KB)', '['.repeat(300_000) + ']'.repeat(300_000)],
    ['400,000 array items', `[${Array(400_000).fill(1).join(',')}]`],
  ])('deep or wide JSON (%s): 400, no stack overflow', async (_name, body) => {
    expectAppError(await post(body), 400, 'invalid_request');
  });

  it.each([
    ['/v1/pets?limit=1&limit=2', /query\.limit must be given at most once/],
    ['/v1/pets?status=sold&status=sold', /query\.status must be given at most once/],
    ['/v1/pets?limit[]=1', /query\.limit\[\] is not allowed/],
    ['/v1/pets?status[a]=b', /query\.status\[a\] is not allowed/],
    ['/v1/pets?limit%5B%5D=1', /query\.limit\[\] is not allowed/],
  ])('query %s: 400 naming the rule', async (target, message) => {
    expectAppError(await get(target), 400, 'invalid_request', message);
  });

  it.each([
    ['/v1/pets/%FF', 400, /^path \/v1\/pets\/%FF is not valid percent-encoded UTF-8$/],
    ['/v1/pets/%00', 400, /petId/],
    ['/v1/pets/1%00', 400, /petId/],
    ['/v1/pets/%C0%AF', 400, /not valid percent-encoded UTF-8/],
    ['/v1/pets?status=%FF', 400, /query\.status/],
    ['/v1/pets?status=%00', 400, /query\.status/],
    ['/v1/pets?status=%E0%A4%A', 400, /query\.status/],
    ['/v1/%FF', 404, /no such route/],
  ])('percent-encoded NUL or invalid UTF-8 %s: %d Error object', async (target, status, message) => {
    const result = await get(target);
    expectAppError(result, status, status === 400 ? 'invalid_request' : 'not_found', message);
  });

  it.each([
    ['a raw NUL byte in the path', Buffer.from('GET /v1/pets/\u00001 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
    ['a raw 0xFF byte in the path', Buffer.from('GET /v1/pets/\u00ff HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
    ['a NUL byte in a header value', Buffer.from('GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 'latin1')],
    [
      'Transfer-Encoding and Content-Length together',
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    ],
    ['a bad chunk size', `POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
    ['no Host header', 'GET /v1/pets HTTP/1.1\r\n\r\n'],
  ])('%s: 400 from the HTTP parser, closed', async (_name, request) => {
    const result = await send([request]);
    expectErrorObject(result, 400, 'invalid_request');
    expect(result.closedAfterMs).toBeDefined();
  });

  it('a body longer than its Content-Length: the extra bytes are a malformed next request (400), closed', async () => {
    const result = await send([
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}{"name":"Rex","categoryId":1}`,
    ]);
    // Node's parser reads the rest as the next request at once, before the first is answered.
    expectErrorObject(result, 400, 'invalid_request');
    expect(JSON.parse(result.text).message).toMatch(/^malformed HTTP request/);
    expect(result.closedAfterMs).toBeDefined();
  });

  it.each([
    ['invalid UTF-8 bytes', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","categoryId":1}')]), /not valid UTF-8/],
    ['an escaped NUL', '{"name":"a\\u0000b","categoryId":1}', /NUL/],
    ['a raw NUL byte', '{"name":"a\u0000b","categoryId":1}', /not valid JSON/],
    ['an unpaired surrogate', '{"name":"a\\ud800","categoryId":1}', /surrogate/],
    ['an escaped NUL in a property name', '{"name":"a","categoryId":1,"x\\u0000":1}', /NUL/],
  ])('a JSON body with %s: 400, nothing stored', async (_name, body, message) => {
    expectAppError(await post(body), 400, 'invalid_request', message);
    const listed = await timedGet(`${server.url}/v1/pets?limit=100`, { Authorization: `Bearer ${key}` }, { check: true });
    expect(JSON.parse(listed.text)).toEqual([]);
  });

  it('a surrogate pair (an emoji) is fine', async () => {
    const result = await post('{"name":"Rex \\ud83d\\udc36","categoryId":1}');
    expect(result.status).toBe(201);
    expect(JSON.parse(result.text).name).toBe('Rex \u{1F436}');
  });

  it('a chunked body over 1 MB: 413 payload_too_large', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const chunks: string[] = [`POST /v1/pets HTTP/1.1\r\nHost: x\r\n${KEY_HEADER(key)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`];
    for (let i = 0; i < 20; i++) chunks.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    chunks.push('0\r\n\r\n');
    const result = await rawExchange(server.port, { chunks, gapMs: 5, deadlineMs: 8_000 });
    expectAppError(result, 413, 'payload_too_large');
  });
});
