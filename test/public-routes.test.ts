import type { Response } from 'supertest';
import { appOn, startTestApp, type TestApp } from './support/test-app';
import { checkedFetch, listenOnFreePort } from './support/http';
import type { Storage } from '../src/service/storage';
import { READINESS_REUSE_MS } from '../src/public';

/** The public routes outside the contract: how the documents and /docs are cached, which routes count against the rate limit, how often /readyz checks. */
let t: TestApp;
afterEach(() => t?.close());

/** Every document and the page with its init script: fixed at start, revalidated on each use. */
const GENERATED = [
  '/openapi.json',
  '/openapi.yaml',
  '/openapi/v1.json',
  '/openapi/v1.yaml',
  '/openapi/v2.json',
  '/openapi/v2.yaml',
  '/docs/v1.json',
  '/docs/v2.json',
  '/docs/',
  '/docs/swagger-ui-init.js',
];
/** Swagger UI's own files, kept a week by browsers. */
const ASSETS = ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/favicon-32x32.png', '/docs/swagger-ui-bundle.js.map'];

describe('caching', () => {
  let docs: TestApp;
  beforeAll(async () => {
    // Every request here counts in one address's window: room for them all.
    docs = await startTestApp({ rateLimits: { ipPerMinute: 10_000 } });
  });
  afterAll(() => docs.close());

  it.each(GENERATED)(
    '%s: no-cache with a strong ETag; 304 without a body when If-None-Match matches (weakly, in a list, or *), on GET and HEAD',
    async (path) => {
      const first = await docs.api.get(path).expect(200);
      expect(first.headers['cache-control']).toBe('no-cache');
      const etag = first.headers['etag'] as string;
      expect(etag).toMatch(/^"[^"]+"$/);
      for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const notModified = await docs.api.get(path).set('If-None-Match', condition).expect(304);
        expect(notModified.text).toBe('');
        expect(notModified.headers['etag']).toBe(etag);
        expect(notModified.headers['cache-control']).toBe('no-cache');
      }
      await docs.api.head(path).set('If-None-Match', etag).expect(304);
      expect((await docs.api.head(path).expect(200)).headers['etag']).toBe(etag);
      expect((await docs.api.get(path).set('If-None-Match', '"other"').expect(200)).text).toBe(first.text);
    },
  );

  it('an ETag names the content: two instances give the same ETags; /openapi.json is /openapi/v1.json, other documents differ', async () => {
    const other = await appOn(docs.storage);
    try {
      const etagsOf = async (api: TestApp['api']) =>
        Object.fromEntries(await Promise.all(GENERATED.map(async (path) => [path, (await api.get(path).expect(200)).headers['etag']] as const)));
      const etags = await etagsOf(docs.api);
      expect(await etagsOf(other.api)).toEqual(etags);
      expect(etags['/openapi.json']).toBe(etags['/openapi/v1.json']);
      expect(etags['/openapi.yaml']).toBe(etags['/openapi/v1.yaml']);
      expect(new Set(Object.values(etags)).size).toBe(GENERATED.length - 2);
    } finally {
      await other.close();
    }
  });

  it.each(ASSETS)('%s: kept a week, then revalidated by its ETag (304)', async (path) => {
    const first = await docs.api.get(path).expect(200);
    expect(first.headers['cache-control']).toBe('public, max-age=604800');
    const etag = first.headers['etag'] as string;
    expect(etag).toBeDefined();
    const notModified = await docs.api.get(path).set('If-None-Match', etag).expect(304);
    expect(notModified.text).toBe('');
    await docs.api.head(path).set('If-None-Match', etag).expect(304);
  });
});

describe('rate limits', () => {
  const remaining = (res: Response) => Number(res.headers['x-ratelimit-remaining']);

  it("the documents and /docs count in the address's window with the API's requests without a key (304s too): 429 with Retry-After past it", async () => {
    t = await startTestApp({ rateLimits: { ipPerMinute: 4 } });
    // A key used before the address is refused keeps its own window (test/rate-limits.test.ts).
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    const spec = await t.api.get('/openapi.json').expect(200);
    expect(remaining(spec)).toBe(3);
    expect(spec.headers['ratelimit-policy']).toBe('"ip";q=4;w=60');
    expect(remaining(await t.api.get('/docs/').expect(200))).toBe(2);
    expect(
      remaining(
        await t.api
          .get('/openapi.json')
          .set('If-None-Match', spec.headers['etag'] as string)
          .expect(304),
      ),
    ).toBe(1);
    expect(remaining(await t.api.get('/v1/pets').expect(401))).toBe(0);
    for (const path of ['/openapi.json', '/openapi/v2.yaml', '/docs/', '/docs/v1.json', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js', '/v1/pets']) {
      const refused = await t.api.get(path).expect(429);
      expect(refused.body).toEqual({
        code: 'rate_limited',
        status: 429,
        message: 'rate limit exceeded: the limit for requests without a valid API key is 4 requests',
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(remaining(refused)).toBe(0);
    }
    // Load balancers and scrapers are never refused, and not counted.
    for (let i = 0; i < 10; i++) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const res = await t.api.get(path).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
    // The key is served; the documents count by address, with a key or not.
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/openapi.json').set('Authorization', t.auth).expect(429);
  });
});

describe('/readyz', () => {
  it('checks the database once for concurrent requests, then reuses the result for READINESS_REUSE_MS', async () => {
    t = await startTestApp();
    let pings = 0;
    const counted: Storage = {
      ...t.storage,
      ping: async () => {
        pings += 1;
        await new Promise((resolve) => setTimeout(resolve, 50)); // still running while the others arrive
        await t.storage.ping();
      },
    };
    let time = Date.now();
    const ready = await appOn(counted, { now: () => time });
    const listening = await listenOnFreePort(ready.app);
    try {
      const ask = async () => (await checkedFetch(`${listening.url}/readyz`)).body;
      const answers = await Promise.all(Array.from({ length: 50 }, ask));
      expect(answers).toEqual(Array(50).fill({ status: 'ready', checks: { database: 'ok' } }));
      expect(pings).toBe(1);
      time += READINESS_REUSE_MS - 1;
      for (let i = 0; i < 20; i++) await ask();
      expect(pings).toBe(1);
      time += 1;
      await ask();
      await Promise.all(Array.from({ length: 10 }, ask));
      expect(pings).toBe(2);
    } finally {
      await listening.close();
      await ready.close();
    }
  });
});
