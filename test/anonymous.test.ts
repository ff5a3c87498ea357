/**
 * `security: []` on an operation means no key: the Authorization header is
 * not examined, there is no 401, and requests are limited per client IP.
 */
import { startTestApp, type TestApp } from './support/test-app';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';

describe('an operation with security: []', () => {
  let t: TestApp;
  beforeEach(async () => {
    const spec = loadSpec();
    objectAt(spec, 'paths', '/pets', 'get').security = [];
    t = await startTestApp({ contract: spec, rateLimits: { ipPerMinute: 3 } });
  });
  afterEach(() => t.close());

  it('answers without a key, and ignores an invalid one, counted per IP; then 429', async () => {
    const first = await t.api.get('/v1/pets').expect(200);
    expect(first.headers['ratelimit-policy']).toBe('"ip";q=3;w=60');
    await t.api.get('/v1/pets').set('Authorization', 'Bearer not-a-key').expect(200);
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200); // even a valid key is not looked at: per IP
    const refused = await t.api.get('/v1/pets').expect(429);
    expect(refused.body.code).toBe('rate_limited');
  });

  it('other operations still require a key', async () => {
    const res = await t.api.get('/v1/pets/1').expect(401);
    expect(res.body.code).toBe('unauthorized');
  });
});

describe('a public template next to a concrete path that requires a key', () => {
  it('the concrete path still requires the key', async () => {
    const spec = loadSpec();
    // /pets (requires a key) and a public GET /{section} template that would also match it.
    spec.paths['/{section}'] = { get: { ...objectAt(spec, 'paths', '/store/orders', 'get'), operationId: 'listSection', security: [] } };
    const t = await startTestApp({ contract: spec });
    try {
      await t.api.get('/v1/pets').expect(401);
    } finally {
      await t.close();
    }
  });
});
