import { createPetAdoptionClient, retryAfterMs, type PetAdoptionClientOptions } from '../src/client';
import { startTestApp, type TestApp } from './support/test-app';
import type { WallClock } from './support/clock';
import { startTestAppWithFrozenClock } from './support/frozen-clock-app';
import { checkingFetch, listenOnFreePort, type CheckingFetch, type ListeningServer } from './support/http';

let t: TestApp;
let closeApp: (() => Promise<void>) | undefined;
let server: ListeningServer | undefined;
let baseUrl: string;
/** Checks every response the typed clients of a test receive (retries included), and keeps the breaches: a retrying client may catch the error thrown. */
let checking: CheckingFetch;
beforeEach(() => {
  checking = checkingFetch();
});

async function serve(rateLimits = {}) {
  t = await startTestApp({ rateLimits });
  closeApp = () => t.close();
  await listen();
}

/** Like `serve`, on a stopped wall clock (support/frozen-clock-app.ts): a window ends only through `clock.advance`. */
async function serveWithFrozenClock(rateLimits = {}): Promise<WallClock> {
  const frozen = await startTestAppWithFrozenClock({ rateLimits });
  t = frozen.t;
  closeApp = frozen.close;
  await listen();
  return frozen.clock;
}

async function listen() {
  server = await listenOnFreePort(t.app);
  baseUrl = `${server.url}/v1`;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
  await closeApp?.();
  closeApp = undefined;
  expect(checking.breaches.map(String)).toEqual([]);
});

/** The typed client against the real server, its responses checked against the contract. */
const checkedClient = (options: Omit<PetAdoptionClientOptions, 'fetch'>) => createPetAdoptionClient({ ...options, fetch: checking });

const keyOf = (auth: string) => auth.slice('Bearer '.length);

describe('typed client (openapi-fetch over the generated paths)', () => {
  it('lists, creates and gets pets against the real server', async () => {
    await serve();
    const client = checkedClient({ baseUrl, apiKey: keyOf(t.auth) });
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 2 } });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 2, status: 'available' });
    const listed = await client.GET('/pets', { params: { query: { status: 'available', limit: 5 } } });
    expect(listed.data).toEqual([created.data]);
    const fetched = await client.GET('/pets/{petId}', { params: { path: { petId: created.data!.id } } });
    expect(fetched.data).toEqual(created.data);
    const missing = await client.GET('/pets/{petId}', { params: { path: { petId: 999 } } });
    expect(missing.error).toEqual({ code: 'not_found', status: 404, message: 'pet 999 does not exist' });
  });

  it('on 429 waits for Retry-After and retries a GET', async () => {
    // A 30 s window on a stopped clock: the client's wait moves the clock instead of sleeping,
    // and the window cannot end between the two requests however slow the machine is.
    const clock = await serveWithFrozenClock({ minuteWindowMs: 30_000 });
    const key = keyOf(await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 100 }));
    const waits: number[] = [];
    const client = checkedClient({
      baseUrl,
      apiKey: key,
      retry: {
        sleep: async (ms) => {
          waits.push(ms);
          await clock.advance(ms);
        },
      },
    });
    expect((await client.GET('/pets')).response.status).toBe(200);
    const started = Date.now();
    const retried = await client.GET('/pets');
    expect(retried.response.status).toBe(200);
    // One wait, of Retry-After: the rest of the window, in whole seconds (30; Redis counts its expiry in real time).
    expect(waits).toEqual([expect.any(Number)]);
    expect(waits[0]! % 1000).toBe(0);
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(waits[0]!);
  });

  it('gives every create a fresh Idempotency-Key and retries it on 429: stored once, the same key on each attempt', async () => {
    const clock = await serveWithFrozenClock({ minuteWindowMs: 30_000 });
    const key = keyOf(await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 100 }));
    const sent: Array<string | null> = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      sent.push(request.headers.get('Idempotency-Key'));
      return checking(request);
    };
    const client = createPetAdoptionClient({ baseUrl, apiKey: key, fetch, retry: { sleep: (ms) => clock.advance(ms) } });
    await client.GET('/pets');
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(created.response.status).toBe(201);
    expect(sent.slice(1)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), sent[1]]); // refused once (429), then retried with the same key
    const another = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(another.response.status).toBe(201);
    expect(sent.at(-1)).not.toBe(sent[1]); // a new create, a new key
    expect(await t.storage.pets.list({ limit: 10 })).toHaveLength(2);
  });

  it('retries a create after a network error or a 503 with the same key: the server stores it once', async () => {
    await serve();
    const attempts: Array<string | null> = [];
    let failures = 0;
    // The first attempt reaches the server but its answer is lost; the second gets a 503; the third succeeds (a replay).
    const flaky: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      attempts.push(request.headers.get('Idempotency-Key'));
      const response = await checking(request);
      if (request.method === 'POST' && failures++ === 0) throw new TypeError('fetch failed: socket hang up');
      if (request.method === 'POST' && failures === 2) {
        return new Response(JSON.stringify({ code: 'unavailable', message: 'down', status: 503 }), {
          status: 503,
          headers: { 'Retry-After': '0', 'Content-Type': 'application/json' },
        });
      }
      return response;
    };
    const client = createPetAdoptionClient({ baseUrl, apiKey: keyOf(t.auth), fetch: flaky, retry: { sleep: async () => undefined } });
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(new Set(attempts).size).toBe(1);
    expect(attempts).toHaveLength(3);
    expect(await t.storage.pets.list({ limit: 10 })).toHaveLength(1);
  });

  it('never retries a POST without an Idempotency-Key unless told to', async () => {
    // A 30 s window on a stopped clock, as above.
    const clock = await serveWithFrozenClock({ minuteWindowMs: 30_000 });
    const key = keyOf(await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 100 }));
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      await clock.advance(ms);
    };
    const client = checkedClient({ baseUrl, apiKey: key, retry: { sleep }, idempotencyKeys: false });
    await client.GET('/pets');
    const refused = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(refused.response.status).toBe(429);
    expect(refused.error?.code).toBe('rate_limited');
    expect(waits).toEqual([]);
    expect(await t.storage.pets.list({ limit: 10 })).toEqual([]);

    const opted = checkedClient({ baseUrl, apiKey: key, retry: { sleep, retryNonIdempotent: true }, idempotencyKeys: false });
    const created = await opted.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
    expect(created.response.status).toBe(201);
    expect(waits.length).toBe(1);
    expect(await t.storage.pets.list({ limit: 10 })).toHaveLength(1); // the body was resent intact, once
  });

  it('stops retrying when the key is temporarily banned', async () => {
    await serve({ banAfter: 1, banSeconds: 60 });
    const key = keyOf(await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 100 }));
    const raw = checkedClient({ baseUrl, apiKey: key, retry: false });
    await raw.GET('/pets');
    expect((await raw.GET('/pets')).error?.code).toBe('rate_limited'); // the one refusal allowed before a ban
    const waits: number[] = [];
    const client = checkedClient({ baseUrl, apiKey: key, retry: { sleep: async (ms) => void waits.push(ms) } });
    const banned = await client.GET('/pets');
    expect(banned.error?.code).toBe('key_temporarily_banned');
    expect(waits).toEqual([]);
  });
});

describe('backoff without Retry-After', () => {
  it('exponential with full jitter, capped, and a maximum number of retries', async () => {
    let calls = 0;
    const fetch = async () => {
      calls++;
      return new Response(JSON.stringify({ code: 'rate_limited', message: 'slow down', status: 429 }), {
        status: 429,
        headers: { 'Content-Type': 'application/json' },
      });
    };
    const waits: number[] = [];
    const client = createPetAdoptionClient({
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'pas_x',
      fetch,
      retry: { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, random: () => 1, sleep: async (ms) => void waits.push(ms) },
    });
    const result = await client.GET('/pets');
    expect(result.response.status).toBe(429);
    expect(waits).toEqual([100, 200, 400, 800, 1000]);
    expect(calls).toBe(6);

    const jittered: number[] = [];
    const half = createPetAdoptionClient({
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'pas_x',
      fetch,
      retry: { maxRetries: 2, baseDelayMs: 100, random: () => 0.5, sleep: async (ms) => void jittered.push(ms) },
    });
    await half.GET('/pets');
    expect(jittered).toEqual([50, 100]);
  });

  it('gives the 429 back when Retry-After asks for a longer wait than the cap', async () => {
    const fetch = async () => new Response('{}', { status: 429, headers: { 'Retry-After': '3600' } });
    const waits: number[] = [];
    const client = createPetAdoptionClient({ baseUrl: 'http://x/v1', apiKey: 'k', fetch, retry: { sleep: async (ms) => void waits.push(ms) } });
    expect((await client.GET('/pets')).response.status).toBe(429);
    expect(waits).toEqual([]);
  });

  it('reads Retry-After as seconds or an HTTP-date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
