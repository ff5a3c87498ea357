import { startTestApp, type TestApp } from './support/test-app';
import { loadSpec } from './support/contracts';

/** What /docs hands the page, without a browser (test/docs-browser.test.ts drives one). */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The version selector Swagger UI is started with, read from the init script it loads. */
async function selectorOfTheDocsPage(): Promise<Array<{ url: string; name: string }>> {
  const init = await t.api
    .get('/docs/swagger-ui-init.js')
    .expect(200)
    .expect('Content-Type', /javascript/);
  const options = /var options = (\{[\s\S]*?\});\n/.exec(init.text)?.[1];
  return JSON.parse(options!).customOptions.urls;
}

it("the docs page offers every version, v1 first, each with this server (its base path) first, then the YAML's servers", async () => {
  const selector = await selectorOfTheDocsPage();
  expect(selector).toEqual([
    { url: '/docs/v1.json', name: 'v1 (1.2.0)' },
    { url: '/docs/v2.json', name: 'v2 (2.3.0)' },
  ]);
  for (const version of ['v1', 'v2']) {
    const { servers } = (await t.api.get(`/docs/${version}.json`).expect(200)).body;
    expect(servers[0]).toEqual({ url: `/${version}`, description: 'this server' });
    expect(servers.slice(1)).toEqual(loadSpec(`openapi/${version}/openapi.yaml`).servers);
  }
});

it('publishes every version without a key: /openapi/v1.json|yaml, /openapi/v2.json|yaml; /openapi.json|yaml stay v1', async () => {
  const v1 = (
    await t.api
      .get('/openapi/v1.json')
      .expect(200)
      .expect('Content-Type', /application\/json/)
  ).body;
  const v2 = (await t.api.get('/openapi/v2.json').expect(200)).body;
  expect(v1).toEqual(loadSpec('openapi/v1/openapi.yaml'));
  expect(v2).toEqual(loadSpec('openapi/v2/openapi.yaml'));
  expect(v2.info.version).toBe('2.3.0');
  expect(Object.keys(v2.paths)).toContain('/store/orders/{orderId}');
  expect((await t.api.get('/openapi.json').expect(200)).body).toEqual(v1);
  expect((await t.api.get('/openapi/v2.yaml').expect(200).expect('Content-Type', /yaml/)).text).toContain('version: 2.3.0');
  expect((await t.api.get('/openapi.yaml').expect(200)).text).toContain('version: 1.2.0');
  await t.api.get('/openapi/v3.json').expect(404);
});

it('/openapi.json and /openapi.yaml serve the contract as written (its own servers only)', async () => {
  expect((await t.api.get('/openapi.json').expect(200)).body.servers).toEqual(loadSpec().servers);
  const yaml = await t.api.get('/openapi.yaml').expect(200);
  expect(yaml.text).not.toContain('this server');
});

it("/docs keeps helmet's CSP but never upgrades its requests to HTTPS; the API keeps the full policy", async () => {
  const docs = (await t.api.get('/docs/').expect(200)).headers['content-security-policy'];
  expect(docs).toContain("default-src 'self'");
  expect(docs).toContain("script-src 'self'");
  expect(docs).not.toContain('upgrade-insecure-requests');
  const api = (await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200)).headers['content-security-policy'];
  expect(api).toContain('upgrade-insecure-requests');
});
