import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/test-app';
import { createHash } from 'node:crypto';
import { generateApiKey } from '../src/service/keys';
import { issueApiKey } from '../src/service/keys';
import { createLogger } from '../src/observability';
import { columnText, rawRows } from './support/raw-rows';
import { accessLineOf } from './support/memory-log';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp({ settings: { keyCacheTtlMs: 200 } });
});
afterEach(() => t.close());

const expect401 = async (authorization: string | undefined, message: RegExp) => {
  const req = t.api.get('/v1/pets');
  if (authorization !== undefined) req.set('Authorization', authorization);
  const res = await req.expect(401);
  expect(res.body).toEqual({ code: 'unauthorized', status: 401, message: expect.stringMatching(message) });
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  return res;
};

describe('bearer authentication on every operation', () => {
  it.each([
    ['GET', '/v1/pets'],
    ['POST', '/v1/pets'],
    ['GET', '/v1/pets/1'],
    ['GET', '/v1/store/orders'],
  ])('%s %s without a key is a 401 Error object with WWW-Authenticate: Bearer', async (method, path) => {
    const res = await (method === 'GET' ? t.api.get(path) : t.api.post(path).send({ name: 'Rex', categoryId: 1 })).expect(401);
    expect(res.body.code).toBe('unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('a request without a key stores nothing', async () => {
    await t.api.post('/v1/pets').send({ name: 'Rex', categoryId: 1 }).expect(401);
    expect(await t.storage.pets.list({ limit: 10 })).toEqual([]);
  });

  it('refuses a missing header, another scheme, a malformed or unknown key', async () => {
    await expect401(undefined, /missing API key/);
    await expect401(`Basic ${Buffer.from('a:b').toString('base64')}`, /Bearer scheme/);
    await expect401('Bearer', /Bearer scheme/);
    await expect401('Bearer not-a-key', /invalid API key/);
    await expect401(`Bearer ${generateApiKey()}`, /invalid API key/);
    await expect401(`${t.auth}x`, /invalid API key/);
  });

  it('the scheme is case-insensitive', async () => {
    const key = t.auth.slice('Bearer '.length);
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      await t.api.get('/v1/pets').set('Authorization', `${scheme} ${key}`).expect(200);
    }
  });

  it('a key created while the app runs works at once', async () => {
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    const fresh = await t.issueKey('pro');
    await t.api.get('/v1/pets').set('Authorization', fresh).expect(200);
  });

  it('a revoked key is refused once the key cache expires', async () => {
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    const [record] = await t.storage.apiKeys.list();
    await t.storage.apiKeys.revoke(record!.id);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // The caller learns what it would of a key that never existed: "revoked" would confirm a leaked key was genuine.
    const refused = await expect401(t.auth, /^invalid API key$/);
    // The operator learns more: the access line of that request says why.
    const line = accessLineOf(t.logs(), refused.headers['x-request-id']);
    expect(line).toMatchObject({ status: 401, reason: 'unauthorized', detail: 'API key has been revoked' });
  });

  it('stores only the SHA-256 hash of a key, never the key', async () => {
    const { key, record } = await issueApiKey(t.storage.apiKeys, { plan: 'free', label: 'hash check' });
    expect(key).toMatch(/^pas_[A-Za-z0-9_-]{43}$/);
    // The rows as the database holds them (not through the storage layer), and the hash computed here.
    const rows = await rawRows(t.databaseUrl, 'api_keys');
    const row = rows.find((candidate) => Number(candidate['id']) === record.id);
    expect(row).toBeDefined();
    const sha256 = createHash('sha256').update(key, 'utf8').digest('hex');
    expect(row!['key_hash']).toBe(sha256);
    // The app finds the key by that hash, and its listing shows nothing more of the key.
    expect((await t.storage.apiKeys.findByHash(sha256))?.id).toBe(record.id);
    expect(JSON.stringify(await t.storage.apiKeys.list())).not.toContain(key.slice(10));
    // The listing prefix (pas_ and the first 6 characters of the secret) is the only part of the key kept.
    expect(row!['prefix']).toBe(key.slice(0, 10));
    // No column of any row holds the key, its secret, the part of it never shown (nor any 8 characters
    // of that part), or the secret's bytes in another encoding; that also holds for the app's own key.
    for (const issued of [key, t.auth.slice('Bearer '.length)]) {
      const secret = issued.slice('pas_'.length);
      const hidden = secret.slice(6);
      const bytes = Buffer.from(secret, 'base64url');
      const forbidden = [
        issued,
        secret,
        ...Array.from({ length: hidden.length - 7 }, (_, i) => hidden.slice(i, i + 8)),
        bytes.toString('hex'),
        bytes.toString('base64'),
      ];
      for (const stored of rows) {
        for (const [column, value] of Object.entries(stored)) {
          const text = columnText(value);
          expect({ column, leaked: forbidden.filter((fragment) => text.includes(fragment)) }).toEqual({ column, leaked: [] });
        }
      }
    }
  });

  it('the logger redacts Authorization headers wherever they are logged', () => {
    let written = '';
    const logger = createLogger('info', {
      write: (line: string) => {
        written += line;
      },
    });
    logger.info({ req: { headers: { authorization: t.auth } } }, 'a request');
    logger.info({ headers: { authorization: t.auth } }, 'some headers');
    expect(written).toContain('[redacted]');
    expect(written).not.toContain(t.auth.slice('Bearer '.length));
  });

  it('keys never appear in logs', async () => {
    await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200);
    await t.api.get('/v1/pets').set('Authorization', `${t.auth}x`).expect(401);
    const logs = t.logs();
    expect(logs).toContain('/v1/pets');
    expect(logs).not.toContain(t.auth.slice('Bearer pas_'.length));
  });

  it('issuing an enterprise key needs its custom limits; other plans refuse them', async () => {
    await expect(issueApiKey(t.storage.apiKeys, { plan: 'enterprise' })).rejects.toThrow(/--rpm N and --rpd N/);
    await expect(issueApiKey(t.storage.apiKeys, { plan: 'free', requestsPerMinute: 5 })).rejects.toThrow(/only for enterprise/);
    const { record } = await issueApiKey(t.storage.apiKeys, { plan: 'enterprise', requestsPerMinute: 5000, requestsPerDay: 10 ** 6 });
    expect(record).toMatchObject({ plan: 'enterprise', requestsPerMinute: 5000, requestsPerDay: 10 ** 6 });
  });
});

describe('security headers', () => {
  it("are exactly helmet's, on API responses and errors alike", async () => {
    const reference = express();
    reference.use(helmet());
    reference.get('/x', (_req, res) => {
      res.end();
    });
    const expected = (await request(reference).get('/x')).headers;
    const helmetNames = Object.keys(expected).filter((name) => !['date', 'connection', 'keep-alive', 'content-length', 'x-powered-by'].includes(name));
    expect(helmetNames.length).toBeGreaterThan(10);
    for (const res of [await t.api.get('/v1/pets').set('Authorization', t.auth), await t.api.get('/v1/pets'), await t.api.get('/nowhere')]) {
      for (const name of helmetNames) expect([name, res.headers[name]]).toEqual([name, expected[name]]);
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

describe('public routes need no key', () => {
  it('GET /healthz answers 200', async () => {
    expect((await t.api.get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
  });

  it('GET /openapi.json and /openapi.yaml serve the contract', async () => {
    const json = await t.api
      .get('/openapi.json')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(json.body.info.version).toBe('1.2.0');
    expect(Object.keys(json.body.paths)).toEqual(['/pets', '/pets/{petId}', '/store/orders']);
    const yaml = await t.api.get('/openapi.yaml').expect(200).expect('Content-Type', /yaml/);
    expect(yaml.text).toContain('operationId: listPets');
  });

  it('GET /docs serves the interactive reference with the CSP still on', async () => {
    const res = await t.api
      .get('/docs/')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(res.text).toContain('swagger-ui');
    expect(res.text).toContain('<title>Pet Adoption API reference</title>');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['x-powered-by']).toBeUndefined();
    const init = await t.api.get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('/docs/v1.json');
    expect(init.text).toContain('/docs/v2.json');
  });
});
