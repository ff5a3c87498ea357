/**
 * Every security scheme OpenAPI defines, on a purpose-written document served
 * through the composition root (as v1): the project's API keys presented as
 * each key-carrying scheme says (bearer, basic with the key as user name or
 * password, apiKey in a header, the query or a cookie), access tokens for
 * oauth2 and openIdConnect verified against a JWKS this test serves (RS256,
 * ES256, issuer, audience, expiry, key rotation, scopes in `scope` or `scp`),
 * OR and AND of requirements, anonymous operations; 401 with a challenge per
 * accepted scheme, 403 `insufficient_scope`; keys never in the logs; the rate
 * limits whichever way the caller came in.
 */
import type { OpenApiDocument } from '@spec-first/engine';
import { startTestApp, type TestApp } from './support/test-app';
import { startTestIssuer, type TestIssuer } from './support/jwks';
import { loadConfig } from '../src/config';
import { accessLineOf } from './support/memory-log';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'pets-api';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } };
const operation = (operationId: string, security: unknown) => ({ get: { operationId, security, responses: ok } });

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'schemes', version: '1.0.0' },
  paths: {
    '/bearer': operation('bearer', [{ bearerKey: [] }]),
    '/basic': operation('basic', [{ basicKey: [] }]),
    '/header': operation('header', [{ headerKey: [] }]),
    '/query': operation('query', [{ queryKey: [] }]),
    '/cookie': operation('cookie', [{ cookieKey: [] }]),
    '/either': operation('either', [{ headerKey: [] }, { oauth: ['pets:read'] }]),
    '/both': operation('both', [{ headerKey: [], queryKey: [] }]),
    '/scoped': operation('scoped', [{ oauth: ['pets:read', 'pets:write'] }]),
    '/oidc': operation('oidc', [{ oidc: ['profile'] }]),
    '/open': operation('open', []),
    '/maybe': operation('maybe', [{}, { bearerKey: [] }]),
  },
  components: {
    securitySchemes: {
      bearerKey: { type: 'http', scheme: 'bearer' },
      basicKey: { type: 'http', scheme: 'basic' },
      headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      queryKey: { type: 'apiKey', in: 'query', name: 'api_key' },
      cookieKey: { type: 'apiKey', in: 'cookie', name: 'session' },
      oauth: {
        type: 'oauth2',
        flows: { clientCredentials: { tokenUrl: 'https://issuer.test/token', scopes: { 'pets:read': 'read', 'pets:write': 'write' } } },
      },
      oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://issuer.test/.well-known/openid-configuration' },
    },
  },
} as unknown as OpenApiDocument;

/** Every operation answers who called: the principal and the plan. */
const whoCalled = async (_input: unknown, context: { caller?: { principal: string; plan: string } }) => ({
  status: 200,
  body: { principal: context.caller?.principal ?? null, plan: context.caller?.plan ?? null },
});
const handlers = Object.fromEntries(Object.values(DOCUMENT.paths).map((item) => [(item as { get: { operationId: string } }).get.operationId, whoCalled]));

let issuer: TestIssuer;
let t: TestApp;
let key: string;

/** The server's token settings: this test's issuer, its `iss` and `aud`, callers on the pro plan. */
const tokenSettings = (tokenType: string | undefined) =>
  ({
    jwksUrl: issuer.jwksUrl,
    issuer: ISSUER,
    audience: AUDIENCE,
    maxTokenAgeSeconds: 86_400,
    tokenType,
    plan: 'pro',
    acceptAnyIssuerAndAudience: false,
  }) as const;

beforeAll(async () => {
  issuer = await startTestIssuer();
  t = await startTestApp({
    versions: [{ name: 'v1', contract: DOCUMENT, handlers: handlers as never }],
    settings: {
      oauth2: tokenSettings(undefined),
    },
  });
  key = t.auth.replace(/^Bearer /, '');
});
afterAll(async () => {
  await t.close();
  await issuer.close();
});

const sign = (claims: Record<string, unknown> = {}, options?: Parameters<TestIssuer['sign']>[1]) =>
  issuer.sign({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, scope: 'pets:read pets:write profile', ...claims }, options);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const WRONG = `pas_${'0'.repeat(43)}`;

describe('API keys, presented as each scheme carries them', () => {
  it.each([
    ['http bearer', '/v1/bearer', (k: string) => ({ headers: { Authorization: `Bearer ${k}` } }), /^Bearer realm="pet-adoption"/],
    ['http basic, the key as user name', '/v1/basic', (k: string) => ({ headers: { Authorization: basic(k, '') } }), /^Basic realm="pet-adoption"/],
    ['http basic, the key as password', '/v1/basic', (k: string) => ({ headers: { Authorization: basic('', k) } }), /^Basic realm="pet-adoption"/],
    ['apiKey in a header', '/v1/header', (k: string) => ({ headers: { 'X-API-Key': k } }), /^ApiKey realm="pet-adoption", in="header", name="X-API-Key"/],
    ['apiKey in the query', '/v1/query', (k: string) => ({ query: `?api_key=${k}` }), /^ApiKey realm="pet-adoption", in="query", name="api_key"/],
    [
      'apiKey in a cookie',
      '/v1/cookie',
      (k: string) => ({ headers: { Cookie: `theme=dark; session=${k}` } }),
      /^ApiKey realm="pet-adoption", in="cookie", name="session"/,
    ],
  ])("%s: the key passes; none or a wrong one is a 401 with the scheme's challenge", async (_what, path, present, challenge) => {
    const send = (k: string | undefined) => {
      const { headers = {}, query = '' } = k === undefined ? {} : (present(k) as { headers?: Record<string, string>; query?: string });
      const test = t.api.get(`${path}${query}`);
      for (const [name, value] of Object.entries(headers)) test.set(name, value);
      return test;
    };
    const passed = await send(key).expect(200);
    expect(passed.body).toEqual({ principal: expect.stringMatching(/^key:\d+$/), plan: 'free' });
    expect(passed.headers['x-ratelimit-limit']).toBe('60');
    for (const credentials of [undefined, WRONG]) {
      const refused = await send(credentials).expect(401);
      expect(refused.body).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(refused.headers['www-authenticate']).toMatch(challenge);
    }
  });

  it('several schemes in one requirement are AND: both keys, or a 401', async () => {
    await t.api.get(`/v1/both?api_key=${key}`).set('X-API-Key', key).expect(200);
    await t.api.get('/v1/both').set('X-API-Key', key).expect(401);
    await t.api.get(`/v1/both?api_key=${key}`).expect(401);
  });

  it('a list of requirements is OR: a key or a token; neither is a 401 naming both schemes', async () => {
    await t.api.get('/v1/either').set('X-API-Key', key).expect(200);
    await t.api
      .get('/v1/either')
      .set('Authorization', `Bearer ${await sign()}`)
      .expect(200);
    const refused = await t.api.get('/v1/either').expect(401);
    expect(refused.headers['www-authenticate']).toMatch(/ApiKey realm="pet-adoption", in="header", name="X-API-Key"/);
    expect(refused.headers['www-authenticate']).toMatch(/Bearer realm="pet-adoption"/);
  });

  it('security: [] admits anyone without looking; [{}, scheme] admits anyone but checks a key when one is given', async () => {
    expect((await t.api.get('/v1/open').set('Authorization', `Bearer ${WRONG}`).expect(200)).body).toEqual({ principal: null, plan: null });
    expect((await t.api.get('/v1/maybe').expect(200)).body).toEqual({ principal: null, plan: null });
    expect((await t.api.get('/v1/maybe').set('Authorization', `Bearer ${key}`).expect(200)).body.principal).toMatch(/^key:\d+$/);
    await t.api.get('/v1/maybe').set('Authorization', `Bearer ${WRONG}`).expect(401);
  });

  it('keys sent in a header, the query or a cookie never reach the logs', async () => {
    const logged = t.logs();
    expect(logged).toContain('"path":"/v1/query"');
    expect(logged).not.toContain(key);
  });
});

describe('access tokens (oauth2, openIdConnect) against the JWKS', () => {
  it('RS256 and ES256 tokens pass; the caller is the subject, on OAUTH2_PLAN, with its rate limits', async () => {
    for (const alg of ['RS256', 'ES256'] as const) {
      const passed = await t.api
        .get('/v1/scoped')
        .set('Authorization', `Bearer ${await sign({}, { alg })}`)
        .expect(200);
      expect(passed.body).toEqual({ principal: 'token:alice', plan: 'pro' });
      expect(passed.headers['x-ratelimit-limit']).toBe('300');
    }
    await t.api
      .get('/v1/oidc')
      .set('Authorization', `Bearer ${await sign({ scope: undefined, scp: ['profile'] })}`)
      .expect(200);
  });

  it('scopes from `scope` (space-separated) or `scp` (array); a missing one is a 403 insufficient_scope (RFC 6750)', async () => {
    await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${await sign({ scope: undefined, scp: ['pets:read', 'pets:write'] })}`)
      .expect(200);
    const refused = await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${await sign({ scope: 'pets:read' })}`)
      .expect(403);
    expect(refused.body).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="pets:read pets:write"');
    // Its access line says why, for this request id.
    const line = accessLineOf(t.logs(), refused.headers['x-request-id']);
    expect(line).toMatchObject({ status: 403, reason: 'insufficient_scope', detail: refused.body.message });
  });

  it.each([
    ['expired', { exp: Math.floor(Date.now() / 1000) - 3600 }],
    ['not yet valid', { nbf: Math.floor(Date.now() / 1000) + 3600 }],
    ['from another issuer', { iss: 'https://elsewhere.test/' }],
    ['for another audience', { aud: 'other-api' }],
    ['without a subject', { sub: undefined }],
    [
      'issued longer ago than OAUTH2_MAX_TOKEN_AGE_SECONDS (whatever its exp)',
      { iat: Math.floor(Date.now() / 1000) - 86_400 - 3_600, exp: Math.floor(Date.now() / 1000) + 3_600 },
    ],
  ])('a token %s is a 401', async (_what, claims) => {
    const refused = await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${await sign(claims)}`)
      .expect(401);
    expect(refused.body).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer realm="pet-adoption"/);
  });

  it('a token without exp is a 401 naming the claim: once stolen, it would work forever', async () => {
    const refused = await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${await sign({}, { expires: false })}`)
      .expect(401);
    expect(refused.body.message).toBe('invalid access token: the token has no exp claim');
  });

  it('with OAUTH2_TOKEN_TYPE=at+jwt (RFC 9068), an access token passes and an ID token (no such typ) is a 401', async () => {
    const typed = await startTestApp({
      versions: [{ name: 'v1', contract: DOCUMENT, handlers: handlers as never }],
      settings: {
        oauth2: tokenSettings('at+jwt'),
      },
    });
    try {
      await typed.api
        .get('/v1/scoped')
        .set('Authorization', `Bearer ${await sign({}, { typ: 'at+jwt' })}`)
        .expect(200);
      const idToken = await typed.api
        .get('/v1/scoped')
        .set('Authorization', `Bearer ${await sign({ nonce: 'n-0S6_WzA2Mj' }, { typ: 'JWT' })}`)
        .expect(401);
      expect(idToken.body.message).toBe('invalid access token: the token is not an access token of the accepted type (typ header)');
      await typed.api
        .get('/v1/scoped')
        .set('Authorization', `Bearer ${await sign()}`)
        .expect(401);
    } finally {
      await typed.close();
    }
  });

  it('a token that is not a JWT, or signed by an unknown key, is a 401', async () => {
    await t.api.get('/v1/scoped').set('Authorization', 'Bearer not-a-jwt').expect(401);
    const [header, payload] = (await sign()).split('.');
    await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${header}.${payload}.${'A'.repeat(342)}`)
      .expect(401);
  });

  it('a key added to the JWKS after the first fetch (a rotation) is found: the unknown kid refreshes the keys', async () => {
    issuer.rotate('rs-2', 'RS256');
    // The set is fetched again at most once a second (jose's cooldown), so a flood of unknown kids cannot hammer the issuer.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await t.api
      .get('/v1/scoped')
      .set('Authorization', `Bearer ${await sign({}, { kid: 'rs-2' })}`)
      .expect(200);
  });
});

describe('a server that verifies access tokens must know which tokens are for it', () => {
  const JWKS = 'https://issuer.test/.well-known/jwks.json';

  it.each([
    ['neither OAUTH2_ISSUER nor OAUTH2_AUDIENCE', {}],
    ['OAUTH2_ISSUER alone', { OAUTH2_ISSUER: ISSUER }],
    ['OAUTH2_AUDIENCE alone', { OAUTH2_AUDIENCE: AUDIENCE }],
  ])('OAUTH2_JWKS_URL with %s refuses to start, naming both variables', (_what, env) => {
    expect(() => loadConfig({ OAUTH2_JWKS_URL: JWKS, ...env })).toThrow(
      /OAUTH2_JWKS_URL: verifies access tokens, so OAUTH2_ISSUER and OAUTH2_AUDIENCE must both be set/,
    );
  });

  it('both set: tokens are checked for them; the explicit opt-out (tests) drops the check, and is refused in production', () => {
    expect(loadConfig({ OAUTH2_JWKS_URL: JWKS, OAUTH2_ISSUER: ISSUER, OAUTH2_AUDIENCE: AUDIENCE }).oauth2).toMatchObject({
      issuer: ISSUER,
      audience: AUDIENCE,
      maxTokenAgeSeconds: 86_400,
    });
    expect(loadConfig({ OAUTH2_JWKS_URL: JWKS, OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE: 'true', NODE_ENV: 'test' }).oauth2).toMatchObject({
      issuer: undefined,
      audience: undefined,
    });
    expect(() => loadConfig({ OAUTH2_JWKS_URL: JWKS, OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE: 'true', NODE_ENV: 'production' })).toThrow(
      /OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE: is for tests/,
    );
    expect(loadConfig({ OAUTH2_MAX_TOKEN_AGE_SECONDS: '600' }).oauth2.maxTokenAgeSeconds).toBe(600);
  });
});
