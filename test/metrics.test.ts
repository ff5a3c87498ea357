import crypto from 'node:crypto';
import { startTestApp, type TestApp } from './support/test-app';
import { samples, sampleValue } from './support/prometheus';
import { Redis } from 'ioredis';
import { REDIS_URL, TEST_BACKEND } from './support/backend';
import { openSharedState } from '../src/service/shared-state';
import { createLogger } from '../src/observability';
import { checkedFetch, listenOnFreePort } from './support/http';

let t: TestApp;
afterEach(() => t.close());

const scrape = async (app: TestApp = t) => {
  const res = await app.api.get('/metrics').expect(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return { text: res.text, all: samples(res.text) };
};
const count = (operation: string, method: string, status: number) => ({ operation, method, status: String(status) });
const BACKEND = TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

describe('GET /metrics after traffic', () => {
  it('reports request durations by operationId, key-cache hits and misses, query durations and the process metrics', async () => {
    t = await startTestApp();
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200); // key cache miss
    await t.api.get('/v1/pets?limit=5').set('Authorization', t.auth).expect(200); // hit
    await t.api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(201);
    await t.api.get('/v1/pets/abc').set('Authorization', t.auth).expect(400); // refused by the validator
    await t.api.get('/v1/pets/12').expect(401); // refused before the validator: still named
    await t.api.delete('/v1/pets').set('Authorization', t.auth).expect(405); // outside the contract
    await t.api.get('/healthz').expect(200);
    await t.api.get('/v1/kittens/7').set('Authorization', t.auth).expect(404);

    const { text, all } = await scrape();
    const histogram = 'pas_http_request_duration_seconds';
    expect(sampleValue(all, `${histogram}_count`, count('listPets', 'GET', 200))).toBe(2);
    expect(sampleValue(all, `${histogram}_count`, count('createPet', 'POST', 201))).toBe(1);
    expect(sampleValue(all, `${histogram}_count`, count('getPet', 'GET', 400))).toBe(1);
    expect(sampleValue(all, `${histogram}_count`, count('getPet', 'GET', 401))).toBe(1);
    expect(sampleValue(all, `${histogram}_count`, count('unmatched', 'DELETE', 405))).toBe(1);
    expect(sampleValue(all, `${histogram}_count`, count('healthz', 'GET', 200))).toBe(1);
    expect(sampleValue(all, `${histogram}_count`, count('unmatched', 'GET', 404))).toBe(1);
    // Buckets for a service answering in 1–50 ms, cumulative up to +Inf.
    const buckets = all.filter((s) => s.name === `${histogram}_bucket` && s.labels.operation === 'listPets' && s.labels.method === 'GET');
    expect(buckets.map((s) => s.labels.le)).toEqual(['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '1', '+Inf']);
    expect(buckets.at(-1)!.value).toBe(2);
    expect(sampleValue(all, `${histogram}_sum`, count('listPets', 'GET', 200))).toBeGreaterThan(0);
    expect(text).not.toContain('kittens');

    expect(sampleValue(all, 'pas_key_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(sampleValue(all, 'pas_key_cache_lookups_total', { result: 'hit' })).toBe(5);

    const queries = (operation: string) => sampleValue(all, 'pas_db_query_duration_seconds_count', { operation, backend: BACKEND });
    expect(queries('apiKeys.findByHash')).toBe(1);
    expect(queries('pets.list')).toBe(2);
    expect(queries('pets.create')).toBe(1);
    expect(sampleValue(all, 'pas_db_query_duration_seconds_sum', { operation: 'pets.list', backend: BACKEND })).toBeGreaterThan(0);

    // PostgreSQL has a pool; the embedded SQLite has none.
    if (BACKEND === 'postgres') {
      expect(sampleValue(all, 'pas_db_pool_connections', { backend: 'postgres' })).toBeGreaterThanOrEqual(1);
      // Idle connections are some of the pool's, never more.
      expect(sampleValue(all, 'pas_db_pool_idle_connections', { backend: 'postgres' })).toBeLessThanOrEqual(
        sampleValue(all, 'pas_db_pool_connections', { backend: 'postgres' })!,
      );
      expect(sampleValue(all, 'pas_db_pool_waiting_requests', { backend: 'postgres' })).toBe(0);
    } else {
      expect(sampleValue(all, 'pas_db_pool_connections')).toBeUndefined();
    }
    // Present from the start, whatever their value (0 unless Redis had trouble: on a loaded machine a command may time out).
    expect(sampleValue(all, 'pas_redis_errors_total', { kind: 'connection' })).toEqual(expect.any(Number));
    expect(sampleValue(all, 'pas_redis_errors_total', { kind: 'command' })).toEqual(expect.any(Number));

    // The default process and Node metrics.
    for (const name of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
      expect(sampleValue(all, name)).toBeGreaterThan(0);
    }
    expect(sampleValue(all, 'nodejs_eventloop_lag_seconds')).toEqual(expect.any(Number));
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
  });

  it('counts rate-limit refusals and bans by plan and window', async () => {
    t = await startTestApp({ rateLimits: { banAfter: 2, ipPerMinute: 2 } });
    const key = await t.issueKey('enterprise', { requestsPerMinute: 2, requestsPerDay: 1000 });
    for (let i = 0; i < 2; i++) await t.api.get('/v1/pets').set('Authorization', key).expect(200);
    // Refusals 1 and 2 are rate_limited; the 3rd is over banAfter: banned, as is the next.
    for (const code of ['rate_limited', 'rate_limited', 'key_temporarily_banned', 'key_temporarily_banned']) {
      expect((await t.api.get('/v1/pets').set('Authorization', key).expect(429)).body.code).toBe(code);
    }
    // Without a key: counted per IP.
    await t.api.get('/v1/pets').expect(401);
    await t.api.get('/v1/pets').expect(401);
    await t.api.get('/v1/pets').expect(429);

    const { all } = await scrape();
    expect(sampleValue(all, 'pas_rate_limit_refusals_total', { plan: 'enterprise', window: 'minute' })).toBe(2);
    expect(sampleValue(all, 'pas_rate_limit_refusals_total', { plan: 'enterprise', window: 'ban' })).toBe(2);
    expect(sampleValue(all, 'pas_rate_limit_refusals_total', { plan: 'none', window: 'ip' })).toBe(1);
    expect(sampleValue(all, 'pas_rate_limit_bans_total', { plan: 'enterprise', window: 'minute' })).toBe(1);
    expect(sampleValue(all, 'pas_http_request_duration_seconds_count', count('listPets', 'GET', 429))).toBe(5);
  });

  it('is never rate limited: scraped past the per-IP limit', async () => {
    t = await startTestApp({ rateLimits: { ipPerMinute: 3 } });
    for (let i = 0; i < 3; i++) await t.api.get('/v1/pets').expect(401);
    await t.api.get('/v1/pets').expect(429); // the limit is real
    for (let i = 0; i < 30; i++) {
      const res = await t.api.get('/metrics').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('keeps the number of series flat whatever paths and methods clients send', async () => {
    t = await startTestApp({ rateLimits: { ipPerMinute: 1_000_000 } });
    const { url: base, close } = await listenOnFreePort(t.app);
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'PURGE', 'MKCOL'];
    // Never all digits: `/v1/pets/123456789012` is a real getPet (404), whose series a first batch may not have made yet.
    const random = () => `w${crypto.randomBytes(6).toString('hex')}`;
    const paths = [
      (word: string) => `/${word}`,
      (word: string) => `/v1/${word}/${random()}`,
      (word: string) => `/v1/pets/${word}`,
      (word: string) => `/docs-${word}`,
      (word: string) => `/v1/pets?${word}=1`,
    ];
    const words: string[] = [];
    // Every combination of method, kind of path and key (valid or not) comes up in each batch.
    const batch = async () => {
      for (let i = 0; i < methods.length * paths.length * 2; i++) {
        const word = random();
        words.push(word);
        const path = paths[i % paths.length]!(word);
        const method = methods[Math.floor(i / paths.length) % methods.length]!;
        const authorization = i < methods.length * paths.length ? t.auth : 'Bearer pas_wrong';
        await checkedFetch(base + path, { method, headers: { authorization } });
      }
    };
    const ownSeries = async () => (await scrape()).all.filter((s) => s.name.startsWith('pas_')).length;
    try {
      await scrape(); // so the scrapes' own series exist before counting
      await batch();
      const before = await ownSeries();
      await batch();
      expect(await ownSeries()).toBe(before);
      const { text, all } = await scrape();
      for (const word of words) expect(text).not.toContain(word);
      const requests = all.filter((s) => s.name.startsWith('pas_http_request_duration_seconds'));
      const labels = (name: string) => new Set(requests.map((s) => s.labels[name]));
      const operations = ['listPets', 'createPet', 'getPet', 'listStoreOrders', 'unmatched', 'docs', 'metrics', 'healthz', 'readyz', 'spec'];
      expect([...labels('operation')].filter((name) => !operations.includes(name!))).toEqual([]);
      expect(labels('method')).toContain('other');
      expect([...labels('method')].filter((name) => ![...methods.slice(0, 7), 'other'].includes(name!))).toEqual([]);
    } finally {
      await close();
    }
  });
});

(TEST_BACKEND === 'postgres' ? describe : describe.skip)('Redis errors', () => {
  it('counts failed commands (a NOSCRIPT reply, which rate-limit-redis answers by loading its script, is not one)', async () => {
    t = await startTestApp();
    const kinds: string[] = [];
    const prefix = `pas:metrics-redis-${process.pid}:`;
    const shared = (await openSharedState({ redisUrl: REDIS_URL!, redisKeyPrefix: prefix }, t.storage.apiKeys, createLogger('silent'), (kind) =>
      kinds.push(kind),
    ))!;
    const raw = new Redis(REDIS_URL!);
    try {
      await raw.hset(`${prefix}ban:key:1`, 'not', 'a string'); // GET on a hash: WRONGTYPE
      await expect(shared.banList.bannedUntil('key:1', Date.now())).rejects.toThrow(/WRONGTYPE/);
      const store = shared.stores.minute as unknown as { init(options: object): Promise<void>; incrementScriptSha: Promise<string> };
      await store.init({ windowMs: 60_000 });
      store.incrementScriptSha = Promise.resolve('0'.repeat(40)); // as after a Redis restart: NOSCRIPT, then loaded and retried
      await shared.stores.minute.increment('someone');
      expect(kinds).toEqual(['command']);
    } finally {
      await raw.del(`${prefix}ban:1`);
      raw.disconnect();
      await shared.close();
    }
  });
});

describe('access to /metrics', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';

  it('with METRICS_TOKEN: 401 Error object without the right bearer token, 200 with it', async () => {
    t = await startTestApp({ settings: { metricsAccess: { token: TOKEN } } });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, t.auth]) {
      const request = t.api.get('/metrics');
      if (authorization) request.set('Authorization', authorization);
      const res = await request.expect(401);
      expect(res.body).toEqual({ code: 'unauthorized', status: 401, message: expect.any(String) });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.text).not.toContain('pas_');
    }
    await t.api.get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    await t.api.get('/metrics').set('Authorization', `bearer ${TOKEN}`).expect(200);
  });

  it('compares the token in constant time, on equal-length digests whatever the length sent', async () => {
    t = await startTestApp({ settings: { metricsAccess: { token: TOKEN } } });
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      await t.api.get('/metrics').set('Authorization', 'Bearer short').expect(401);
      await t.api
        .get('/metrics')
        .set('Authorization', `Bearer ${'x'.repeat(200)}`)
        .expect(401);
      await t.api.get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
      expect(compare).toHaveBeenCalledTimes(3);
      for (const [a, b] of compare.mock.calls) {
        expect((a as Buffer).length).toBe(32);
        expect((b as Buffer).length).toBe(32);
      }
    } finally {
      compare.mockRestore();
    }
  });

  it('disabled: 404 Error object, like any unknown route', async () => {
    t = await startTestApp({ settings: { metricsAccess: 'disabled' } });
    const res = await t.api.get('/metrics').expect(404);
    expect(res.body.code).toBe('not_found');
  });
});
