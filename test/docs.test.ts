import { startTestApp, type TestApp } from './support/test-app';
import { loadSpec } from '../src/contract/load-spec';

/** What /docs hands the page, without a browser (test/docs-browser.test.ts drives one). */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The document Swagger UI is started with, read from the init script it loads. */
async function documentOfTheDocsPage(): Promise<{ servers: Array<{ url: string; description?: string }> }> {
  const init = await t.api.get('/docs/swagger-ui-init.js').expect(200).expect('Content-Type', /javascript/);
  const options = /var options = (\{[\s\S]*?\});\n/.exec(init.text)?.[1];
  return JSON.parse(options!).swaggerDoc;
}

it('the docs page gets the contract with this server (the relative base path) first, then the YAML\'s servers', async () => {
  const { servers } = await documentOfTheDocsPage();
  expect(servers[0]).toEqual({ url: '/v1', description: 'this server' });
  expect(servers.slice(1)).toEqual(loadSpec().servers);
});

it('/openapi.json and /openapi.yaml serve the contract as written (its own servers only)', async () => {
  expect((await t.api.get('/openapi.json').expect(200)).body.servers).toEqual(loadSpec().servers);
  const yaml = await t.api.get('/openapi.yaml').expect(200);
  expect(yaml.text).not.toContain('this server');
});

it('/docs keeps helmet\'s CSP but never upgrades its requests to HTTPS; the API keeps the full policy', async () => {
  const docs = (await t.api.get('/docs/').expect(200)).headers['content-security-policy'];
  expect(docs).toContain("default-src 'self'");
  expect(docs).toContain("script-src 'self'");
  expect(docs).not.toContain('upgrade-insecure-requests');
  const api = (await t.api.get('/v1/pets').set('Authorization', t.auth).expect(200)).headers['content-security-policy'];
  expect(api).toContain('upgrade-insecure-requests');
});
