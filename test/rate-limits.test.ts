import type { Response } from 'supertest';
import { startTestApp, type TestApp } from './support/test-app';
import type { RateLimitSettings } from '../src/config';
import type { WallClock } from './support/clock';
import { startTestAppWithFrozenClock } from './support/frozen-clock-app';
import { randomBytes } from 'node:crypto';
import { samples, sampleValue } from './support/prometheus';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowSeconds = () => Math.floor(Date.now() / 1000);

let t: TestApp;
/** Set when the app was started by startWithFrozenClock: restores the clock and closes the app. */
let closeFrozen: (() => Promise<void>) | undefined;
afterEach(async () => {
  if (closeFrozen) await closeFrozen();
  else await t?.close();
  closeFrozen = undefined;
});

async function start(rateLimits: Partial<RateLimitSettings> = {}, extra: Parameters<typeof startTestApp>[0] = {}) {
  t = await startTestApp({ rateLimits, ...extra });
  return t;
}

/** Like `start`, on a stopped wall clock (support/frozen-clock-app.ts): windows and bans end only through `clock.advance`. */
async function startWithFrozenClock(rateLimits: Partial<RateLimitSettings>): Promise<WallClock> {
  const frozen = await startTestAppWithFrozenClock({ rateLimits });
  t = frozen.t;
  closeFrozen = frozen.close;
  return frozen.clock;
}

const list = (auth: string) => t.api.get('/v1/pets').set('Authorization', auth);

function rateHeaders(res: Response) {
  return {
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  };
}

describe('per-key limits by plan', () => {
  it('a fresh Free key: requests 1..60 pass with Remaining 59..0; the 61st is a 429 rate_limited with Retry-After', async () => {
    await start();
    const before = nowSeconds();
    for (let i = 1; i <= 60; i++) {
      const res = await list(t.auth).expect(200);
      const headers = rateHeaders(res);
      expect(headers.limit).toBe(60);
      expect(headers.remaining).toBe(60 - i);
      expect(headers.reset).toBeGreaterThanOrEqual(before + 59);
      expect(headers.reset).toBeLessThanOrEqual(nowSeconds() + 61);
    }
    const refused = await list(t.auth).expect(429);
    expect(refused.body).toEqual({ code: 'rate_limited', status: 429, message: expect.stringContaining('minute limit is 60') });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateHeaders(refused).remaining).toBe(0);
    expect(rateHeaders(refused).reset - nowSeconds()).toBeLessThanOrEqual(retryAfter + 1);
  });

  it('keys are counted independently', async () => {
    await start();
    const other = await t.issueKey('free');
    for (let i = 0; i < 60; i++) await list(t.auth).expect(200);
    await list(t.auth).expect(429);
    expect(rateHeaders(await list(other).expect(200)).remaining).toBe(59);
  });

  it('Enterprise keys get their custom numbers', async () => {
    await start();
    const enterprise = await t.issueKey('enterprise', { requestsPerMinute: 3, requestsPerDay: 1000 });
    for (let i = 2; i >= 0; i--) expect(rateHeaders(await list(enterprise).expect(200))).toMatchObject({ limit: 3, remaining: i });
    await list(enterprise).expect(429);
  });

  it.each([
    ['pro', 300],
    ['business', 1000],
  ] as const)('a %s key gets %i per minute', async (plan, perMinute) => {
    await start();
    expect(rateHeaders(await list(await t.issueKey(plan)).expect(200))).toMatchObject({ limit: perMinute, remaining: perMinute - 1 });
  });

  it('the day window binds when it has fewer requests left, and refused requests do not eat its quota', async () => {
    // The default minute window (60 s) and a one-hour day, on a stopped clock.
    const clock = await startWithFrozenClock({ dayWindowMs: 3_600_000 });
    const key = await t.issueKey('enterprise', { requestsPerMinute: 5, requestsPerDay: 8 });
    for (let i = 4; i >= 0; i--) expect(rateHeaders(await list(key).expect(200))).toMatchObject({ limit: 5, remaining: i });
    const minuteRefusal = await list(key).expect(429);
    // Retry when the minute window ends (Redis counts its expiry in real time, hence not exactly 60).
    expect(Number(minuteRefusal.headers['retry-after'])).toBeGreaterThan(30);
    expect(Number(minuteRefusal.headers['retry-after'])).toBeLessThanOrEqual(60);
    await clock.advance(60_000); // the minute window resets; the day window has 3 left
    for (let i = 2; i >= 0; i--) {
      const res = await list(key).expect(200);
      expect(rateHeaders(res)).toMatchObject({ limit: 8, remaining: i });
      expect(res.headers['ratelimit']).toMatch(new RegExp(`^"day";r=${i};t=\\d+$`));
    }
    const dayRefusal = await list(key).expect(429);
    expect(dayRefusal.body.message).toContain('day limit is 8');
    // The day window's end: an hour after the first request, a minute of which has passed.
    expect(Number(dayRefusal.headers['retry-after'])).toBeGreaterThan(3_000);
    expect(Number(dayRefusal.headers['retry-after'])).toBeLessThanOrEqual(3_540);
    expect(rateHeaders(dayRefusal)).toMatchObject({ limit: 8, remaining: 0 });
  });

  it('IETF draft fields describe both windows and the binding one', async () => {
    await start();
    const res = await list(t.auth).expect(200);
    expect(res.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    expect(res.headers['ratelimit']).toMatch(/^"minute";r=59;t=(59|60)$/);
  });

  it("the reset fields are read on the service's clock (the composition's `now`), as bans and sunsets are", async () => {
    // The service's clock 30 s ahead of the wall clock the counters' store keeps: half the minute window is gone.
    await start({}, { now: () => Date.now() + 30_000 });
    const res = await list(t.auth).expect(200);
    expect(res.headers['ratelimit']).toMatch(/^"minute";r=59;t=(29|30)$/);
  });

  it('a plan change takes effect without a restart', async () => {
    await start({}, { settings: { keyCacheTtlMs: 100 } });
    expect(rateHeaders(await list(t.auth).expect(200)).limit).toBe(60);
    const [record] = await t.storage.apiKeys.list();
    await t.storage.apiKeys.setPlan(record!.id, { plan: 'pro', requestsPerMinute: null, requestsPerDay: null });
    // The cached key expires after its TTL; no sleep races it: ask until the new plan shows (a few TTLs at most).
    let sent = 1;
    const ask = async () => {
      sent += 1;
      return rateHeaders(await list(t.auth).expect(200));
    };
    let headers = await ask();
    for (const deadline = Date.now() + 5_000; headers.limit !== 300 && Date.now() < deadline; ) {
      await sleep(25);
      headers = await ask();
    }
    // The window carries over: every request so far counts against the new limit.
    expect(headers).toMatchObject({ limit: 300, remaining: 300 - sent });
  });
});

describe('temporary bans', () => {
  it('start after the configured number of refused requests, show in keys list, and end on time', async () => {
    // Banned for 2 minutes, longer than what is left of the (default, 60 s) minute window; on a stopped clock.
    const clock = await startWithFrozenClock({ banAfter: 3, banSeconds: 120 });
    const key = await t.issueKey('enterprise', { requestsPerMinute: 2, requestsPerDay: 1000 });
    await list(key).expect(200);
    await list(key).expect(200);
    for (let i = 0; i < 3; i++) expect((await list(key).expect(429)).body.code).toBe('rate_limited');

    const banned = await list(key).expect(429);
    expect(banned.body).toEqual({ code: 'key_temporarily_banned', status: 429, message: expect.stringContaining('banned') });
    expect(Number(banned.headers['retry-after'])).toBe(120);
    expect(rateHeaders(banned).remaining).toBe(0);
    const bannedUntil = (await t.storage.apiKeys.list()).find((k) => k.plan === 'enterprise')!.bannedUntil;
    expect(Date.parse(bannedUntil!)).toBeGreaterThan(Date.now());
    expect(rateHeaders(banned).reset).toBe(Math.ceil(Date.parse(bannedUntil!) / 1000));
    // Other keys are not affected.
    await list(t.auth).expect(200);

    await clock.advance(90_000); // the minute window has ended, the ban has not
    expect((await list(key).expect(429)).body.code).toBe('key_temporarily_banned');
    await clock.advance(31_000);
    await list(key).expect(200);
  });

  it('last until the exhausted window resets when that is later, so obeying Retry-After does not re-ban', async () => {
    // Banned for 1 s, much less than what is left of the (default, 60 s) minute window; on a stopped clock.
    const clock = await startWithFrozenClock({ banAfter: 1, banSeconds: 1 });
    const key = await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 1000 });
    await list(key).expect(200);
    expect((await list(key).expect(429)).body.code).toBe('rate_limited');
    const banned = await list(key).expect(429);
    expect(banned.body.code).toBe('key_temporarily_banned');
    const retryAfter = Number(banned.headers['retry-after']);
    // The window's end (60 s; Redis counts its expiry in real time, hence not exactly 60), not banSeconds (1 s).
    expect(retryAfter).toBeGreaterThan(30);
    expect(retryAfter).toBeLessThanOrEqual(60);
    await clock.advance(1_200);
    expect((await list(key).expect(429)).body.code).toBe('key_temporarily_banned');
    await clock.advance(retryAfter * 1000 - 1000);
    await list(key).expect(200); // the window has reset with the ban: no new ban
  });

  it('a key that backs off after a 429 is not banned', async () => {
    // The default minute window (60 s), on a stopped clock.
    const clock = await startWithFrozenClock({ banAfter: 3 });
    const key = await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 1000 });
    for (let round = 0; round < 4; round++) {
      await list(key).expect(200);
      expect((await list(key).expect(429)).body.code).toBe('rate_limited');
      await clock.advance(60_000); // the window resets
    }
    expect((await t.storage.apiKeys.list()).every((k) => k.bannedUntil === null)).toBe(true);
  });
});

describe('requests without a valid key are limited per client IP', () => {
  it('401s carry the IP window headers; over the limit they become 429', async () => {
    await start({ ipPerMinute: 5 });
    // A key used before the address is refused is known valid: it keeps its own limits afterwards.
    await list(t.auth).expect(200);
    for (let i = 4; i >= 0; i--) {
      const res = await list('Bearer pas_guess').expect(401);
      expect(rateHeaders(res)).toMatchObject({ limit: 5, remaining: i });
      expect(res.headers['ratelimit-policy']).toBe('"ip";q=5;w=60');
    }
    const refused = await t.api.get('/v1/pets').expect(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(refused.body.message).toContain('without a valid API key');
    // A valid key from the same IP is counted on its own.
    expect(rateHeaders(await list(t.auth).expect(200))).toMatchObject({ limit: 60, remaining: 58 });
  });

  it('once an address is refused, its next unknown keys are refused without a database lookup; a key known valid keeps its own limits', async () => {
    await start({ ipPerMinute: 3 });
    const lookups = async () => sampleValue(samples(await t.metrics.render()), 'pas_db_query_duration_seconds_count', { operation: 'apiKeys.findByHash' }) ?? 0;
    const randomKey = () => `Bearer pas_${randomBytes(32).toString('base64url')}`;
    await list(t.auth).expect(200);
    for (let i = 0; i < 3; i++) await list(randomKey()).expect(401);
    const before = await lookups();
    const refused = await list(randomKey()).expect(429); // looked up once more, then the address is known refused
    expect(refused.body.message).toContain('without a valid API key');
    expect(await lookups()).toBe(before + 1);
    for (let i = 0; i < 20; i++) {
      const again = await list(randomKey()).expect(429);
      expect(again.body).toEqual({
        code: 'rate_limited',
        status: 429,
        message: 'rate limit exceeded: the limit for requests without a valid API key is 3 requests',
      });
      expect(rateHeaders(again)).toMatchObject({ limit: 3, remaining: 0 });
      expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(await lookups()).toBe(before + 1);
    // The valid key, past its cache time, is looked up again and answered with its own window.
    await sleep(t.service.config.keyCacheTtlMs + 50);
    expect(rateHeaders(await list(t.auth).expect(200))).toMatchObject({ limit: 60, remaining: 58 });
  });

  it('honours X-Forwarded-For only when TRUST_PROXY is set', async () => {
    await start({ ipPerMinute: 1 });
    await t.api.get('/v1/pets').set('X-Forwarded-For', '203.0.113.1').expect(401);
    await t.api.get('/v1/pets').set('X-Forwarded-For', '203.0.113.2').expect(429);
    await t.close();

    await start({ ipPerMinute: 1 }, { settings: { trustProxy: 1 } });
    await t.api.get('/v1/pets').set('X-Forwarded-For', '203.0.113.1').expect(401);
    await t.api.get('/v1/pets').set('X-Forwarded-For', '203.0.113.2').expect(401);
    await t.api.get('/v1/pets').set('X-Forwarded-For', '203.0.113.1').expect(429);
  });
});

describe('every API response carries the rate-limit headers', () => {
  it.each([
    ['200', (auth: string) => t.api.get('/v1/pets').set('Authorization', auth), 200],
    ['201', (auth: string) => t.api.post('/v1/pets').set('Authorization', auth).send({ name: 'Rex', categoryId: 1 }), 201],
    ['400 (failed validation)', (auth: string) => t.api.get('/v1/pets?limit=0').set('Authorization', auth), 400],
    ['400 (malformed JSON)', (auth: string) => t.api.post('/v1/pets').set('Authorization', auth).set('Content-Type', 'application/json').send('{'), 400],
    ['401', () => t.api.get('/v1/pets'), 401],
    ['404 (no such pet)', (auth: string) => t.api.get('/v1/pets/12345').set('Authorization', auth), 404],
    ['404 (no such route)', (auth: string) => t.api.get('/v1/nothing').set('Authorization', auth), 404],
    ['405', (auth: string) => t.api.delete('/v1/pets').set('Authorization', auth), 405],
    [
      '413',
      (auth: string) =>
        t.api
          .post('/v1/pets')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ name: 'x'.repeat(1_100_000) })),
      413,
    ],
    ['415', (auth: string) => t.api.post('/v1/pets').set('Authorization', auth).set('Content-Type', 'text/plain').send('x'), 415],
    ['501', (auth: string) => t.api.get('/v1/store/orders').set('Authorization', auth), 501],
  ])('%s', async (_name, send, status) => {
    await start();
    const res = await send(t.auth).expect(status);
    const headers = rateHeaders(res);
    expect(Number.isInteger(headers.limit) && Number.isInteger(headers.remaining) && Number.isInteger(headers.reset)).toBe(true);
    expect(headers.reset).toBeGreaterThanOrEqual(nowSeconds());
    expect(res.headers['ratelimit-policy']).toBeDefined();
  });

  it('429', async () => {
    await start();
    const key = await t.issueKey('enterprise', { requestsPerMinute: 1, requestsPerDay: 10 });
    await list(key).expect(200);
    const res = await list(key).expect(429);
    expect(rateHeaders(res)).toMatchObject({ limit: 1, remaining: 0 });
  });
});
