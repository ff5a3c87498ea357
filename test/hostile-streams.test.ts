/**
 * Hostile clients of streams (issue 48): a request body of items read in
 * time linear in its bytes however it is chunked, with its items capped and
 * their nesting bounded; streams capped per caller and per process (429 with
 * Retry-After), weighed in the rate limits by their items, cut when they last
 * too long, and yielding the event loop as they write. An API suite: it runs
 * on SQLite and on PostgreSQL + Redis (the weight is counted in Redis there).
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { readItems, type ItemReading } from '@spec-first/engine/testing';
import { sendItems } from '@spec-first/engine/testing';
import { handlers } from '../src/service/handlers';
import { loadConfig } from '../src/config';
import { loadSpec } from './support/contracts';
import { listenOnFreePort, openRequest, type ListeningServer, type OpenedResponse } from './support/http';
import { startTestApp, type TestApp } from './support/test-app';

const LIBRARY = 'test/fixtures/openapi-3.2/library-3.2.yaml';
const STREAM_DEFAULTS = loadConfig({}).streams;

/** A reading of JSON Lines as the engine sets it up, every item valid. */
const reading = (changes: Partial<ItemReading> = {}): ItemReading => ({
  format: 'jsonl',
  maxItemBytes: 1_048_576,
  maxTotalBytes: 200 * 1_048_576,
  maxItems: 10_000,
  check: () => undefined,
  refuseUnsafe: () => undefined,
  ...changes,
});

/** A body that arrives as these chunks, one read each. */
const chunked = (chunks: Iterable<Buffer>): Readable => Readable.from(chunks, { objectMode: false });

async function readAll(body: Readable, settings: ItemReading): Promise<{ items: unknown[]; error?: { status: number; message: string } }> {
  const items: unknown[] = [];
  try {
    for await (const item of readItems(body, settings)) items.push(item);
    return { items };
  } catch (error) {
    return { items, error: error as { status: number; message: string } };
  }
}

/** `text` one byte at a time. */
function* bytewise(text: string): Generator<Buffer> {
  const bytes = Buffer.from(text);
  for (let index = 0; index < bytes.length; index++) yield bytes.subarray(index, index + 1);
}

/** The CPU time (ms) of reading `body` whole, and what it read. */
async function timedRead(body: Readable, settings: ItemReading): Promise<{ cpuMs: number; read: Awaited<ReturnType<typeof readAll>> }> {
  const before = process.cpuUsage();
  const read = await readAll(body, settings);
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, read };
}

/**
 * The cost per byte of reading a body of `bytes` and of one 4 times larger,
 * as a ratio: about 1 when the work is linear in the bytes, about 4 when each
 * chunk rescans what waits (quadratic). A ratio, not a duration, so the
 * machine's speed and load cancel out; measured after a warm-up, on CPU time.
 */
async function growth(body: (bytes: number) => Readable, settings: ItemReading, bytes: number): Promise<number> {
  await timedRead(body(bytes / 4), settings);
  const small = await timedRead(body(bytes), settings);
  const large = await timedRead(body(4 * bytes), settings);
  expect(small.read.error).toBeUndefined();
  expect(large.read.error).toBeUndefined();
  return large.cpuMs / 4 / small.cpuMs;
}

describe('a request body of items is read in time linear in its bytes, however it is chunked', () => {
  it('a long line trickled one byte at a time (JSON Lines): the work per byte does not grow with the line', async () => {
    const long = 'é'.repeat(300_000);
    const read = await readAll(chunked(bytewise(`{"title":"${long}"}\n{"id":2}\n`)), reading());
    expect(read.items).toEqual([{ title: long }, { id: 2 }]);
    const line = (bytes: number): Readable => chunked(bytewise(`{"title":"${'é'.repeat(bytes / 2)}"}\n`));
    expect(await growth(line, reading(), 100_000)).toBeLessThan(2);
  }, 60_000);

  it('the same as a Server-Sent Event whose lines end in CRLF', async () => {
    const long = 'é'.repeat(300_000);
    const read = await readAll(chunked(bytewise(`data: {"title":"${long}"}\r\n\r\ndata: 2\r\n\r\n`)), reading({ format: 'sse' }));
    expect(read.items).toEqual([{ title: long }, 2]);
    const event = (bytes: number): Readable => chunked(bytewise(`data: "${'é'.repeat(bytes / 2)}"\r\n\r\n`));
    expect(await growth(event, reading({ format: 'sse' }), 100_000)).toBeLessThan(2);
  }, 60_000);

  // What 100 MiB of blank lines costs the server, against the reader before this one, is measured by bench/hostile.ts.
  it('100 MiB of blank lines, in 64 KiB chunks: no item, and the line numbers still count them', async () => {
    const blank = Buffer.alloc(65_536, '\n');
    const chunks = function* (): Generator<Buffer> {
      for (let index = 0; index < 1_600; index++) yield blank;
      yield Buffer.from('{"id":1}\nnot json\n');
    };
    const read = await readAll(chunked(chunks()), reading());
    expect(read.items).toEqual([{ id: 1 }]);
    expect(read.error?.status).toBe(400);
    expect(read.error?.message).toBe(`body line ${1_600 * 65_536 + 2} is not valid JSON`);
  }, 60_000);

  it('records split across chunks anywhere (inside a UTF-8 character, at the separator) read as sent, in every format', async () => {
    const items = [{ name: 'Ünïcödé 🐶' }, { id: 2 }, 'x'];
    const bodies = {
      jsonl: `${items.map((item) => JSON.stringify(item)).join('\n')}\n\n`,
      'json-seq': `  ${items.map((item) => `\u001e${JSON.stringify(item)}\n`).join('')}`,
      sse: `: hello\r\n\r\n${items.map((item) => `data: ${JSON.stringify(item)}`).join('\r\n\r\n')}\r`,
    } as const;
    for (const [format, text] of Object.entries(bodies) as [ItemReading['format'], string][]) {
      const bytes = Buffer.from(text);
      for (let cut = 1; cut < bytes.length; cut++) {
        const read = await readAll(chunked([bytes.subarray(0, cut), bytes.subarray(cut)]), reading({ format }));
        expect({ format, cut, ...read }).toEqual({ format, cut, items });
      }
    }
  });

  it('a line over the item limit is a 413 while it is still arriving; invalid UTF-8 a 400', async () => {
    const over = await readAll(chunked([Buffer.from('{"a":"'), Buffer.alloc(2_000, 'x'), Buffer.alloc(2_000, 'x')]), reading({ maxItemBytes: 3_000 }));
    expect(over.error).toMatchObject({ status: 413, message: 'body line 1 must not be larger than 3000 bytes' });
    const invalid = await readAll(chunked([Buffer.from([0x22, 0xc3]), Buffer.from([0x28, 0x22, 0x0a])]), reading());
    expect(invalid.error).toMatchObject({ status: 400, message: 'body is not valid UTF-8' });
  });

  it('more items than maxItems: the items before the limit reach the handler, then a 413', async () => {
    const read = await readAll(chunked([Buffer.from('{}\n{}\n\n{}\n{}\n')]), reading({ maxItems: 3 }));
    expect(read.items).toHaveLength(3);
    expect(read.error).toMatchObject({ status: 413, message: 'body must not hold more than 3 items' });
  });
});

describe('a streamed answer lets the event loop turn as it writes', () => {
  it('a reader that keeps up (every write accepted) does not hold the loop for the whole stream', async () => {
    // A response whose socket takes everything: without the turns, the whole stream is written in microtasks.
    const res = Object.assign(new EventEmitter(), {
      headersSent: false,
      writableNeedDrain: false,
      socket: null,
      writeHead() {
        res.headersSent = true;
      },
      flushHeaders: () => undefined,
      write: () => true,
      end() {
        res.emit('close');
      },
      destroy: () => undefined,
    });
    let turns = 0;
    let counting = true;
    const count = (): void => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const item = { id: 1, name: 'x'.repeat(90) };
    await sendItems(
      res as unknown as ServerResponse,
      200,
      'application/jsonl',
      Array.from({ length: 20_000 }, () => item),
      undefined,
      {
        strict: false,
        onInvalidItem: () => undefined,
        heartbeatMs: 60_000,
        stallMs: 60_000,
        maxDurationMs: 60_000,
        shutdown: new AbortController().signal,
        record: { items: 0, bytes: 0, end: undefined, error: undefined },
      },
    );
    counting = false;
    // About 2 MB written: a turn after every 64 KiB.
    expect(turns).toBeGreaterThanOrEqual(25);
  });
});

/** The library (3.2) as v1, its import and export held open by the test, with v2 (the pets, their export) beside it. */
describe('streams: caps per caller and per process, weight in the rate limits, duration', () => {
  let t: TestApp;
  let server: ListeningServer;
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const hold = (): void => {
    gate = new Promise((resolve) => (release = resolve));
  };
  const registry = {
    ...handlers,
    // One book, then whatever the test holds.
    exportBooks: async () => ({
      status: 200,
      body: (async function* () {
        yield { id: 1, title: 'Dune' };
        await gate;
      })(),
    }),
    importBooks: async (request: { body: AsyncIterable<unknown> }) => {
      let imported = 0;
      for await (const _ of request.body) imported++;
      return { status: 200, body: { imported } };
    },
  };
  beforeAll(async () => {
    t = await startTestApp({
      contract: loadSpec(LIBRARY),
      handlers: registry as unknown as typeof handlers,
      settings: { streams: { ...STREAM_DEFAULTS, perCaller: 2, perProcess: 3, itemsPerRequest: 10 } },
    });
    server = await listenOnFreePort(t.app);
  });
  afterAll(async () => {
    release();
    await server.close();
    await t.close();
  });

  const exportBooks = (auth: string): Promise<OpenedResponse> => openRequest(`${server.url}/v1/books/export`, { headers: { authorization: auth } });
  const firstLine = async (opened: OpenedResponse): Promise<void> => {
    for (let waited = 0; !opened.text().includes('\n'); waited += 10) {
      if (waited > 3_000) throw new Error('no first line');
      await sleep(10);
    }
  };
  const expectTooMany = (opened: OpenedResponse, message: RegExp): void => {
    expect(opened.response.statusCode).toBe(429);
    expect(opened.response.headers['retry-after']).toBe('5');
    expect(JSON.parse(opened.text())).toEqual({ code: 'rate_limited', message: expect.stringMatching(message), status: 429 });
  };

  it('a caller may hold 2 streams at once: the third is a 429 with Retry-After until one ends; another caller is served', async () => {
    hold();
    const first = await exportBooks(t.auth);
    const second = await exportBooks(t.auth);
    await Promise.all([firstLine(first), firstLine(second)]);
    const third = await exportBooks(t.auth);
    await third.ended;
    expectTooMany(third, /at most 2 streams may be open at once per caller/);
    // A request body of items counts as a stream too: refused before a byte of it is read.
    const imported = await openRequest(`${server.url}/v1/books/import`, {
      method: 'POST',
      headers: { authorization: t.auth, 'content-type': 'application/jsonl' },
      body: '{"id":1,"title":"Dune"}\n',
    });
    await imported.ended;
    expectTooMany(imported, /per caller/);
    // Another key, and answers that do not stream, are not held back.
    const other = await t.issueKey('free');
    const theirs = await exportBooks(other);
    await firstLine(theirs);
    expect((await t.api.get('/v2/pets').set('Authorization', t.auth)).status).toBe(200);
    // The process holds 3 now: a fourth caller waits, whoever it is.
    const fourth = await exportBooks(await t.issueKey('free'));
    await fourth.ended;
    expectTooMany(fourth, /the server is serving its most streams at once \(3\)/);
    const refusals = (await t.metrics.streamRefusals.get()).values;
    expect(refusals).toContainEqual(expect.objectContaining({ labels: { scope: 'caller' }, value: 2 }));
    expect(refusals).toContainEqual(expect.objectContaining({ labels: { scope: 'process' }, value: 1 }));
    release();
    await Promise.all([first.ended, second.ended, theirs.ended]);
    // Their slots are free again.
    const again = await exportBooks(t.auth);
    expect(again.response.statusCode).toBe(200);
    expect(await again.ended).toBe('complete');
  });

  it("the items of a stream weigh in its caller's rate limits: each 10 (here) count as one more request", async () => {
    const pro = await t.issueKey('pro');
    const body = `${Array.from({ length: 25 }, (_, index) => JSON.stringify({ id: index + 1, title: `Book ${index + 1}` })).join('\n')}\n`;
    const imported = await openRequest(`${server.url}/v1/books/import`, {
      method: 'POST',
      headers: { authorization: pro, 'content-type': 'application/jsonl' },
      body,
    });
    await imported.ended;
    expect(JSON.parse(imported.text())).toEqual({ imported: 25 });
    expect(imported.response.headers['x-ratelimit-remaining']).toBe('299');
    // The import (1) and its 25 items (2), then this request (1): 4 of 300. The weight is counted as the items
    // are read, by calls to the store that may trail the answer by a round trip.
    await sleep(200);
    const next = await t.api.get('/v2/pets').set('Authorization', pro);
    expect(next.headers['x-ratelimit-remaining']).toBe('296');
  });

  it('a weight never takes a window past its limit: the next request is refused as usual, never banned', async () => {
    // 60 a minute (free), every item a request: 80 items would be 81 requests, 21 refusals over the ban's 10.
    const weighty = await startTestApp({ settings: { streams: { ...STREAM_DEFAULTS, itemsPerRequest: 1 } } });
    const weightyServer = await listenOnFreePort(weighty.app);
    try {
      const staff = await weighty.issueKey('enterprise', { requestsPerMinute: 100_000, requestsPerDay: 1_000_000 });
      for (let index = 0; index < 80; index++) {
        await weighty.api
          .post('/v2/pets')
          .set('Authorization', staff)
          .send({ name: `Pet ${index}`, categoryId: 1 })
          .expect(201);
      }
      const exported = await openRequest(`${weightyServer.url}/v2/pets/export`, { headers: { authorization: weighty.auth } });
      expect(await exported.ended).toBe('complete');
      expect(exported.text().trim().split('\n')).toHaveLength(80);
      let next = await weighty.api.get('/v2/pets').set('Authorization', weighty.auth);
      for (let tries = 0; next.status === 200 && tries < 50; tries++) {
        // The weight is counted as the items go; it may trail the export's end by a moment.
        await sleep(20);
        next = await weighty.api.get('/v2/pets').set('Authorization', weighty.auth);
      }
      expect(next.status).toBe(429);
      expect(next.body.code).toBe('rate_limited');
      expect(next.headers['x-ratelimit-remaining']).toBe('0');
    } finally {
      await weightyServer.close();
      await weighty.close();
    }
  });

  it('an item nested more than 100 levels deep is a 400 naming its line, before the handler sees it; a JSON body too', async () => {
    const deep = `${'['.repeat(101)}${']'.repeat(101)}`;
    const imported = await openRequest(`${server.url}/v1/books/import`, {
      method: 'POST',
      headers: { authorization: t.auth, 'content-type': 'application/jsonl' },
      body: `{"id":1,"title":"Dune"}\n{"id":2,"title":"Emma","shelf":${deep}}\n`,
    });
    await imported.ended;
    expect(imported.response.statusCode).toBe(400);
    expect(JSON.parse(imported.text())).toMatchObject({ message: 'body line 2 must not nest arrays and objects more than 100 levels deep' });
    const hundred = `${'['.repeat(99)}${']'.repeat(99)}`;
    const fine = await openRequest(`${server.url}/v1/books/import`, {
      method: 'POST',
      headers: { authorization: t.auth, 'content-type': 'application/jsonl' },
      body: `{"id":2,"title":"Emma","shelf":${hundred}}\n`,
    });
    await fine.ended;
    expect(JSON.parse(fine.text())).toEqual({ imported: 1 });
    const created = await t.api.post('/v2/pets').set('Authorization', t.auth).send(`{"name":"Rex","categoryId":1,"tags":${deep}}`).type('json');
    expect(created.status).toBe(400);
    expect(created.body.message).toBe('body must not nest arrays and objects more than 100 levels deep');
  });
});

describe('a streamed answer is cut when it lasts STREAM_MAX_SECONDS, however its reader reads', () => {
  it('a slow reader (16 KiB every 100 ms) of an endless stream is cut, counted and logged with the reason', async () => {
    const registry = {
      ...handlers,
      exportBooks: async () => ({
        status: 200,
        body: (async function* () {
          for (let id = 1; ; id++) yield { id, title: 'x'.repeat(1_000) };
        })(),
      }),
    };
    const t = await startTestApp({
      contract: loadSpec(LIBRARY),
      handlers: registry as unknown as typeof handlers,
      settings: { streams: { ...STREAM_DEFAULTS, maxDurationMs: 1_500 } },
    });
    const server = await listenOnFreePort(t.app);
    try {
      const started = Date.now();
      const opened = await openRequest(`${server.url}/v1/books/export`, { headers: { authorization: t.auth }, read: false });
      const reader = setInterval(() => opened.response.read(16_384), 100);
      // The server's side: what the client still has in its buffers, it reads long after the cut.
      for (let waited = 0; !t.logs().includes('"reason":"max_duration"') && waited < 5_000; waited += 20) await sleep(20);
      const lasted = Date.now() - started;
      clearInterval(reader);
      opened.response.resume();
      expect(await opened.ended).toBe('aborted');
      expect(lasted).toBeGreaterThanOrEqual(1_400);
      expect(lasted).toBeLessThan(4_000);
      expect(t.logs()).toMatch(/"reason":"max_duration".*stream cut: it lasted 1.5 s/);
      expect((await t.metrics.streams.get()).values).toContainEqual(
        expect.objectContaining({ labels: expect.objectContaining({ end: 'max_duration' }), value: 1 }),
      );
    } finally {
      await server.close();
      await t.close();
    }
  });
});
