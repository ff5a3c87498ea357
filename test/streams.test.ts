/**
 * Streamed answers (sequential media types: Server-Sent Events, JSON Lines,
 * JSON text sequences) over real sockets: framing, flushing, backpressure, a
 * client that leaves, invalid items, failures part-way, shutdown, and the
 * pet export of v2.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from './support/test-app';
import { handlers } from '../src/service/handlers';
import { loadSpec } from './support/contracts';
import { notImplementedHandler } from '@spec-first/engine';
import { createHttpServer } from '../src/runtime';
import { loadConfig } from '../src/config';
import { listenOnFreePort, openRequest, type ListeningServer, type OpenedResponse } from './support/http';

/** What the test handlers do, set by each test. */
let items: () => AsyncIterable<unknown> | Iterable<unknown> = () => [];
let seen: { lastEventId?: string | undefined; signal?: AbortSignal } = {};

const PET_ITEMS = { type: 'array', items: { $ref: '#/components/schemas/Pet' } };
const EVENT_ITEMS = {
  type: 'array',
  items: {
    type: 'object',
    properties: { data: { type: 'string' }, event: { type: 'string' }, id: { type: 'string' }, retry: { type: 'integer' } },
    required: ['data'],
  },
};

/** v1 with three streaming operations, each answering what `items` gives. */
function streamingContract(): ReturnType<typeof loadSpec> {
  const spec = loadSpec();
  const operation = (operationId: string, mediaType: string, schema: object): object => ({
    get: {
      operationId,
      responses: {
        '200': { description: 'A stream.', content: { [mediaType]: { schema } } },
        '401': { $ref: '#/components/responses/Unauthorized' },
        default: { $ref: '#/components/responses/Error' },
      },
    },
  });
  Object.assign(spec.paths as object, {
    '/lines': operation('lines', 'application/jsonl', PET_ITEMS),
    '/records': operation('records', 'application/json-seq', { type: 'array', items: { type: 'integer' } }),
    '/events': operation('events', 'text/event-stream', EVENT_ITEMS),
    '/texts': operation('texts', 'application/jsonl', { type: 'array', items: { type: 'string' } }),
  });
  return spec;
}

const streamHandler = async (request: { lastEventId: string | undefined; signal: AbortSignal }) => {
  seen = { lastEventId: request.lastEventId, signal: request.signal };
  return { status: 200, body: items() };
};
const registry = { ...handlers, lines: streamHandler, records: streamHandler, events: streamHandler, texts: streamHandler } as unknown as typeof handlers;

type Settings = NonNullable<Parameters<typeof startTestApp>[0]>['settings'];

/** The stream settings as the server reads them with no variable set. */
const STREAM_DEFAULTS = loadConfig({}).streams;

/** The streaming contract served with `streams` over the defaults (a heartbeat a second, a stalled reader let go after 30 s, 1 MiB per request body). */
const streamingApp = ({ streams, ...settings }: Omit<NonNullable<Settings>, 'streams'> & { streams?: Partial<NonNullable<Settings>['streams']> } = {}) =>
  startTestApp({
    contract: streamingContract(),
    handlers: registry,
    settings: { ...settings, streams: { ...STREAM_DEFAULTS, heartbeatMs: 1000, stallMs: 30_000, maxRequestBytes: 1_048_576, ...streams } },
  });

/** A GET of `path` over its own connection, read as it arrives (`read: false`: a client that stopped reading). */
const open = (server: { url: string }, path: string, headers: Record<string, string>, { read = true } = {}): Promise<OpenedResponse> =>
  openRequest(`${server.url}${path}`, { headers, read });

/** Waits until `condition` holds (polling), at most `ms`. */
async function until(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

const pet = (id: number) => ({ id, name: `Pet ${id}`, categoryId: 1, status: 'available' });

describe.each([false, true])('streams (strict response validation %s)', (validateResponses) => {
  let t: TestApp;
  let server: ListeningServer;
  beforeAll(async () => {
    t = await streamingApp({ validateResponses, streams: { heartbeatMs: 200 } });
    server = await listenOnFreePort(t.app);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  const auth = () => ({ authorization: t.auth });

  it('JSON Lines: one JSON text per line, flushed as each item comes, with the headers that stop proxies buffering', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    items = async function* () {
      yield pet(1);
      await gate; // the first line reaches the client before the second exists
      yield pet(2);
    };
    const opened = await open(server, '/v1/lines', auth());
    expect(opened.response.statusCode).toBe(200);
    expect(opened.response.headers['content-type']).toBe('application/jsonl');
    expect(opened.response.headers['x-accel-buffering']).toBe('no');
    expect(opened.response.headers['cache-control']).toBe('no-cache');
    expect(opened.response.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    await until(() => opened.text() === `${JSON.stringify(pet(1))}\n`);
    release();
    expect(await opened.ended).toBe('complete');
    expect(opened.text()).toBe(`${JSON.stringify(pet(1))}\n${JSON.stringify(pet(2))}\n`);
    await until(() => t.logs().includes('"stream":{"items":2,'));
    expect(t.logs()).toMatch(/"operation":"lines".*"stream":\{"items":2,"bytes":\d+,"end":"complete"\}/);
  });

  it('JSON text sequences: each item after RS and ended by a line feed (RFC 7464); an iterable works as well as an async one', async () => {
    items = () => [1, 2, 3];
    const opened = await open(server, '/v1/records', auth());
    expect(await opened.ended).toBe('complete');
    expect(opened.response.headers['content-type']).toBe('application/json-seq');
    expect(opened.text()).toBe('\u001e1\n\u001e2\n\u001e3\n');
  });

  it('Server-Sent Events: fields framed, multi-line data split, Last-Event-ID handed to the handler, a heartbeat on an idle stream', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    items = async function* () {
      yield { event: 'adopted', id: '7', data: 'Rex\nwas adopted' };
      await gate;
      yield { data: 'bye' };
    };
    const opened = await open(server, '/v1/events', { ...auth(), 'last-event-id': '6' });
    expect(opened.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(seen.lastEventId).toBe('6');
    // Idle after the first event: the heartbeat (every 200 ms here) keeps the stream open.
    await until(() => opened.text().includes(': heartbeat\n\n'));
    release();
    expect(await opened.ended).toBe('complete');
    expect(opened.text()).toMatch(/^event: adopted\nid: 7\ndata: Rex\ndata: was adopted\n\n(: heartbeat\n\n)+data: bye\n\n$/);
  });

  it('backpressure: a client that stops reading makes the handler wait (measured), and reading resumes it to the end', async () => {
    const big = 'x'.repeat(64 * 1024);
    let pulled = 0;
    const total = 2000; // 128 MB in all: far more than the socket buffers hold
    items = async function* () {
      for (let i = 1; i <= total; i++) {
        pulled = i;
        yield big;
      }
    };
    const opened = await open(server, '/v1/texts', auth(), { read: false });
    await sleep(500);
    const stalledAt = pulled;
    await sleep(500);
    // The handler is held where the socket filled: nothing more was pulled while nobody read.
    expect(pulled).toBe(stalledAt);
    expect(stalledAt).toBeLessThan(total / 4);
    let bytes = 0;
    opened.response.on('data', (chunk: Buffer) => (bytes += chunk.length));
    opened.response.resume();
    expect(await opened.ended).toBe('complete');
    expect(pulled).toBe(total);
    expect(bytes).toBeGreaterThan(total * big.length);
  });

  it('a client that goes away stops the iterator (its finally runs) and aborts the handler signal, within a second', async () => {
    let stopped = 0;
    items = async function* () {
      try {
        for (let i = 1; ; i++) {
          yield pet(i);
          await sleep(20);
        }
      } finally {
        stopped = Date.now();
      }
    };
    const opened = await open(server, '/v1/lines', auth());
    await until(() => opened.text().split('\n').length > 3);
    const left = Date.now();
    opened.close();
    await until(() => stopped > 0, 1000);
    expect(stopped - left).toBeLessThan(1000);
    expect(seen.signal?.aborted).toBe(true);
    await until(() => t.logs().includes('"end":"client_closed"'));
  });

  it('a handler that throws after the first item: SSE ends with an error event, JSON Lines without its last chunk; logged with the request id', async () => {
    items = async function* () {
      yield { data: 'one' };
      throw new Error('the database went away');
    };
    const sse = await open(server, '/v1/events', auth());
    expect(await sse.ended).toBe('complete');
    expect(sse.text()).toBe('data: one\n\nevent: error\ndata: {"code":"internal_error","message":"the stream failed before its end","status":500}\n\n');
    items = async function* () {
      yield pet(1);
      throw new Error('the database went away');
    };
    const lines = await open(server, '/v1/lines', auth());
    expect(await lines.ended).toBe('aborted');
    expect(lines.text()).toBe(`${JSON.stringify(pet(1))}\n`);
    await until(() => (t.logs().match(/"end":"failed"/g) ?? []).length >= 2);
    expect(t.logs()).toMatch(/"stream":\{"items":1,"bytes":\d+,"end":"failed"\},"err":\{[^}]*"message":"the database went away"/);
  });

  it('a handler whose items fail before the first one: a 500 Error object, as for any handler', async () => {
    items = async function* () {
      yield* [];
      throw new Error('no connection');
    };
    const opened = await open(server, '/v1/lines', auth());
    expect(opened.response.statusCode).toBe(500);
    await opened.ended;
    expect(JSON.parse(opened.text())).toMatchObject({ code: 'internal_error', status: 500 });
    // Logged as the failure it is, with no stream record (nothing was streamed).
    const requestId = opened.response.headers['x-request-id'] as string;
    await until(() => t.logs().includes(`"requestId":"${requestId}","method"`));
    const line = t
      .logs()
      .split('\n')
      .find((entry) => entry.includes(`"requestId":"${requestId}","method"`))!;
    expect(JSON.parse(line)).toMatchObject({ status: 500, reason: 'internal_error' });
    expect(JSON.parse(line).stream).toBeUndefined();
  });

  it(`an item that breaks its schema is counted and logged with the request id; ${validateResponses ? 'strict mode ends the stream there, framing intact' : 'without strict mode or sampling, items are not checked'}`, async () => {
    items = () => [pet(1), { id: 'two' }, pet(3)];
    const opened = await open(server, '/v1/lines', auth());
    const ended = await opened.ended;
    const violations = (await t.metrics.streamItemViolations.get()).values;
    if (validateResponses) {
      expect(ended).toBe('aborted');
      expect(opened.text()).toBe(`${JSON.stringify(pet(1))}\n`); // never a partial or invalid line
      expect(violations).toEqual([expect.objectContaining({ labels: { operation: 'lines' }, value: 1 })]);
      const requestId = opened.response.headers['x-request-id'];
      expect(t.logs()).toMatch(new RegExp(`"requestId":"${requestId}","operation":"lines","item":1,"problem":"[^"]*data/id must be integer`));
      await until(() => t.logs().includes('"end":"invalid_item"'));
      // An invalid first item: nothing was sent, so the answer is a 500 Error object, as for a response that breaks the contract.
      items = () => [{ id: 'one' }];
      const first = await open(server, '/v1/lines', auth());
      expect(first.response.statusCode).toBe(500);
      await first.ended;
      expect(JSON.parse(first.text())).toMatchObject({ code: 'internal_error', status: 500 });
    } else {
      expect(ended).toBe('complete');
      expect(opened.text().trim().split('\n')).toHaveLength(3);
      expect(violations).toEqual([]);
    }
  });

  it('an SSE field that cannot be framed (a line break in an event name) never corrupts the stream', async () => {
    items = () => [{ data: 'ok' }, { event: 'bad\nname', data: 'x' }];
    const opened = await open(server, '/v1/events', auth());
    await opened.ended;
    expect(opened.text()).toMatch(/^data: ok\n\nevent: error\ndata: \{"code":"internal_error"/);
  });
});

describe('streams and the rest of the server', () => {
  it('a sampled request has its stream items checked as they are sent (and sent all the same)', async () => {
    const t = await streamingApp({ validateResponses: false, responseSampleRate: 1 });
    const server = await listenOnFreePort(t.app);
    try {
      items = () => [pet(1), { id: 'two' }];
      const opened = await open(server, '/v1/lines', { authorization: t.auth });
      expect(await opened.ended).toBe('complete');
      expect(opened.text().trim().split('\n')).toHaveLength(2);
      expect((await t.metrics.streamItemViolations.get()).values).toEqual([expect.objectContaining({ value: 1 })]);
    } finally {
      await server.close();
      await t.close();
    }
  });

  it('when the server begins to stop, an open SSE stream ends cleanly (its client reconnects with Last-Event-ID); a JSON Lines stream runs on', async () => {
    const t = await streamingApp({ streams: { heartbeatMs: 100 } });
    const server = await listenOnFreePort(t.app);
    try {
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => (finish = resolve));
      items = async function* () {
        yield { id: '1', data: 'first' };
        await gate;
        yield { id: '2', data: 'second' };
      };
      const sse = await open(server, '/v1/events', { authorization: t.auth });
      await until(() => sse.text().includes('data: first'));
      items = async function* () {
        yield pet(1);
        await gate;
        yield pet(2);
      };
      const lines = await open(server, '/v1/lines', { authorization: t.auth });
      await until(() => lines.text().includes('"id":1'));
      t.service.beginShutdown();
      expect(await sse.ended).toBe('complete');
      expect(sse.text()).not.toContain('second');
      finish();
      expect(await lines.ended).toBe('complete');
      expect(lines.text().trim().split('\n')).toHaveLength(2);
      await until(() => t.logs().includes('"end":"shutdown"'));
    } finally {
      await server.close();
      await t.close();
    }
  });

  it('the v2 pet export: every pet (or one status) as JSON Lines in ascending id order, read a page at a time', async () => {
    const t = await startTestApp();
    const server = await listenOnFreePort(t.app);
    try {
      const key = await t.issueKey('enterprise', { requestsPerMinute: 100_000, requestsPerDay: 1_000_000 });
      const statuses = ['available', 'pending', 'sold'] as const;
      // More than two pages of the export (1,000 pets each).
      for (let i = 0; i < 2_100; i++) await t.storage.pets.create({ name: `Pet ${i}`, categoryId: 1, status: statuses[i % 3]! });
      const all = await open(server, '/v2/pets/export', { authorization: key });
      expect(await all.ended).toBe('complete');
      const pets = all
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: number; status: string });
      expect(pets).toHaveLength(2_100);
      expect(pets.map((p) => p.id)).toEqual([...pets.map((p) => p.id)].sort((a, b) => a - b));
      const sold = await open(server, '/v2/pets/export?status=sold', { authorization: key });
      await sold.ended;
      const soldPets = sold
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { status: string });
      expect(soldPets).toHaveLength(700);
      expect(soldPets.every((p) => p.status === 'sold')).toBe(true);
      // The same authentication, limits and validation as every operation.
      const anonymous = await open(server, '/v2/pets/export', {});
      expect(anonymous.response.statusCode).toBe(401);
      const bad = await open(server, '/v2/pets/export?status=lost', { authorization: key });
      expect(bad.response.statusCode).toBe(400);
      await bad.ended;
      expect(JSON.parse(bad.text()).message).toBe('query.status must be equal to one of the allowed values: available, pending, sold');
      const json = await open(server, '/v2/pets/export', { authorization: key, accept: 'application/json' });
      expect(json.response.statusCode).toBe(406);
    } finally {
      await server.close();
      await t.close();
    }
  });
});

describe('streams and the slow-client limits of the HTTP server', () => {
  it('an SSE stream longer than the request timeout is not cut while it sends, nor while idle with its heartbeat', async () => {
    const t = await streamingApp({ streams: { heartbeatMs: 150 } });
    const limits = { ...loadConfig({ HEADERS_TIMEOUT_SECONDS: '0.3', REQUEST_TIMEOUT_SECONDS: '0.5', KEEP_ALIVE_TIMEOUT_SECONDS: '0.5' }).httpLimits };
    const http = createHttpServer(t.app, limits).listen(0, '127.0.0.1');
    await once(http, 'listening');
    const server = { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
    try {
      items = async function* () {
        // Sending for a while, then idle (heartbeats only), then the last event: 2 s in all, four times the request timeout.
        for (let i = 1; i <= 5; i++) {
          yield { id: String(i), data: `tick ${i}` };
          await sleep(100);
        }
        await sleep(1500);
        yield { id: '6', data: 'last' };
      };
      const opened = await open(server, '/v1/events', { authorization: t.auth });
      expect(await opened.ended).toBe('complete');
      expect(opened.text()).toContain('data: tick 5');
      expect(opened.text()).toContain(': heartbeat');
      expect(opened.text()).toMatch(/data: last\n\n$/);
    } finally {
      http.closeAllConnections();
      http.close();
      await t.close();
    }
  });
});

describe('a reader that stops reading', () => {
  it('is let go after STREAM_STALL_SECONDS with its socket still full: the connection is closed and the stream logged as stalled', async () => {
    const t = await streamingApp({ streams: { stallMs: 300 } });
    const server = await listenOnFreePort(t.app);
    try {
      const big = 'x'.repeat(64 * 1024);
      items = async function* () {
        for (let i = 0; i < 2000; i++) yield big;
      };
      const opened = await open(server, '/v1/texts', { authorization: t.auth }, { read: false });
      await until(() => t.logs().includes('"end":"stalled"'), 3000);
      // Counted as cut, and said so at warn with the reason.
      await until(() => /"reason":"stalled".*stream cut: its reader left the socket full/.test(t.logs()), 3000);
      opened.response.resume();
      expect(await opened.ended).toBe('aborted');
    } finally {
      await server.close();
      await t.close();
    }
  });
});

describe('npm run mock and streams', () => {
  it('a stubbed stream answers its example as a stream of items (each JSON Lines record an item); without one, a generated sample', async () => {
    const spec = streamingContract();
    const lines = (spec.paths as Record<string, { get: { responses: Record<string, { content?: Record<string, object> }> } }>)['/lines']!;
    lines.get.responses['200']!.content!['application/jsonl'] = { schema: PET_ITEMS, example: [pet(1), pet(2)] };
    const t = await startTestApp({
      contract: spec,
      handlers: { ...registry, lines: notImplementedHandler('lines'), records: notImplementedHandler('records') } as unknown as typeof handlers,
      settings: { mockResponses: true },
    });
    const server = await listenOnFreePort(t.app);
    try {
      const opened = await open(server, '/v1/lines', { authorization: t.auth });
      expect(await opened.ended).toBe('complete');
      expect(opened.response.headers['content-type']).toBe('application/jsonl');
      expect(opened.response.headers['x-mock']).toBe('example');
      expect(opened.text()).toBe(`${JSON.stringify(pet(1))}\n${JSON.stringify(pet(2))}\n`);
      const records = await open(server, '/v1/records', { authorization: t.auth });
      expect(await records.ended).toBe('complete');
      // Each record an RS, an integer and a line feed.
      expect(
        records
          .text()
          .split('\u001e')
          .slice(1)
          .every((record) => /^-?\d+\n$/.test(record)),
      ).toBe(true);
      expect(records.text().startsWith('\u001e')).toBe(true);
    } finally {
      await server.close();
      await t.close();
    }
  });
});
