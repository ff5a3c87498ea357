import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { browserMissing, launchChromium } from './support/browser';
import { startServer, type RunningServer } from './support/processes';
import { copyProject, runNpm } from './support/project-copy';
import { PROJECT_ROOT, tempDir } from './support/paths';
import { openStorage } from '../src/service/storage';
import { issueApiKey } from '../src/service/keys';
import type { Pet } from '../src/service/storage';

/**
 * /docs in a real browser (Debian's chromium, driven by playwright-core)
 * against the real server: the page renders the contract, defaults to this
 * server, and "Try it out" returns this server's data with helmet's CSP on.
 */
const missing = browserMissing();
const describeInBrowser = missing ? describe.skip : describe;
export const SCREENSHOT = path.join(PROJECT_ROOT, 'test-artifacts', 'docs.png');

/**
 * Collects console errors, page errors and CSP violations into `problems`,
 * except console errors matching `expected` (e.g. chromium's own log line
 * for a 401 the test asked for).
 */
async function watchProblems(page: Page, problems: string[], expected: RegExp[]): Promise<void> {
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected.some((pattern) => pattern.test(message.text()))) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // Reported by the page itself, besides chromium's own console message.
  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  // (A string: this runs in the page, which the Node typings of the tests do not describe.)
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) =>
      window.reportCspViolation(event.violatedDirective + ' blocked ' + event.blockedURI));`,
  });
}

/** "Authorize" with a key (or "Logout" without one). */
async function authorize(page: Page, key: string | undefined): Promise<void> {
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.modal-ux');
  if (key === undefined) {
    await dialog.locator('button', { hasText: 'Logout' }).click();
  } else {
    await dialog.locator('input').first().fill(key);
    await dialog.locator('button.authorize').click();
  }
  await dialog.locator('button.btn-done').click();
}

/** Opens an operation, presses "Try it out" (once) and "Execute"; resolves with the shown status and body. */
async function tryIt(page: Page, operationId: string, basePath = '/v1'): Promise<{ status: string; body: string; sent: Request }> {
  const operation = page.locator(`#operations-pets-${operationId}`);
  if (!(await operation.locator('.opblock-body').isVisible())) await operation.locator('.opblock-summary').click();
  const tryOut = operation.locator('button.try-out__btn');
  if ((await tryOut.textContent())?.includes('Try it out')) await tryOut.click();
  const answered = page.waitForResponse((response) => new URL(response.url()).pathname === `${basePath}/pets`);
  await operation.locator('button.execute').click();
  const sent = (await answered).request();
  const shown = operation.locator('.live-responses-table tbody tr.response');
  await shown.waitFor();
  return {
    status: (await shown.locator('.response-col_status').textContent())!.trim(),
    body: (await shown.locator('.response-col_description pre').first().textContent())!,
    sent,
  };
}

/** A database with two pets and a fresh key, and the real server on it. */
async function serverWithPets(): Promise<{ server: RunningServer; key: string; stored: Pet[] }> {
  const databaseUrl = `sqlite:${tempDir()}/pets.db`;
  const storage = await openStorage(databaseUrl);
  const stored = [
    await storage.pets.create({ name: 'Biscuit', categoryId: 1, status: 'available' }),
    await storage.pets.create({ name: 'Marmalade', categoryId: 2, status: 'pending' }),
  ];
  const { key } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'browser' });
  await storage.close();
  return { server: await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' }), key, stored };
}

describeInBrowser('/docs in Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  let stored: Pet[];
  /** Console errors, page errors and CSP violations, as they happen. */
  const problems: string[] = [];

  beforeAll(async () => {
    ({ server, key, stored } = await serverWithPets());
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Chromium logs every 4xx fetch; the 401 below is asked for.
    await watchProblems(page, problems, [/^Failed to load resource: the server responded with a status of 401/]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('lists every operation, shows getPet deprecated and defaults to this server', async () => {
    const response = await page.goto(`${server.url}/docs`);
    expect(response?.status()).toBe(200);
    // helmet's CSP: scripts from this origin only (no inline script); fetches
    // fall back to default-src 'self', so "Try it out" may call this origin only.
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("default-src 'self';");
    expect(csp).not.toContain('connect-src');
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => block.id))).toEqual([
      'operations-pets-listPets',
      'operations-pets-createPet',
      'operations-pets-getPet',
      'operations-store-listStoreOrders',
    ]);
    await expect(page.locator('#operations-pets-getPet').getAttribute('class')).resolves.toContain('opblock-deprecated');
    await expect(page.locator('#operations-pets-listPets').getAttribute('class')).resolves.not.toContain('opblock-deprecated');
    const selector = page.locator('.servers select');
    expect(await selector.inputValue()).toBe('/v1');
    expect(await selector.locator('option').first().textContent()).toBe('/v1 - this server');
    // The YAML's servers follow, so a reader can still aim at production or staging.
    expect(await selector.locator('option').count()).toBe(4);
  });

  it('"Authorize" with a key, then "Try it out" on listPets shows this server\'s pets', async () => {
    await authorize(page, key);
    const { status, body, sent } = await tryIt(page, 'listPets');
    expect(status).toBe('200');
    expect(JSON.parse(body)).toEqual(stored);
    // The request went to this server (the page's origin), with the key.
    expect(sent.url()).toBe(`${server.url}/v1/pets?limit=20`);
    expect(await sent.headerValue('authorization')).toBe(`Bearer ${key}`);
    expect(await page.locator('#operations-pets-listPets .request-url pre').textContent()).toBe(`${server.url}/v1/pets?limit=20`);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    // From the server selector to the live response: what a reader checks.
    // (Scrolled to the top, so the boxes are in page coordinates, as clip is.)
    await page.evaluate('window.scrollTo(0, 0)');
    const top = (await page.locator('.scheme-container').boundingBox())!;
    const bottom = (await page.locator('#operations-pets-listPets .live-responses-table').boundingBox())!;
    await page.screenshot({
      path: SCREENSHOT,
      fullPage: true,
      clip: { x: 0, y: top.y, width: 1280, height: bottom.y + bottom.height - top.y },
    });
  });

  it('without a key, "Try it out" shows the 401', async () => {
    await authorize(page, undefined);
    const { status, body, sent } = await tryIt(page, 'listPets');
    expect(await sent.headerValue('authorization')).toBeNull();
    expect(status).toBe('401');
    expect(JSON.parse(body)).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('the version selector shows v2 (its adoption operations, this server at /v2) and "Try it out" works there too', async () => {
    const versions = page.locator('.topbar select');
    expect(await versions.locator('option').allTextContents()).toEqual(['v1 (1.2.0)', 'v2 (2.3.0)']);
    await versions.selectOption({ label: 'v2 (2.3.0)' });
    await page.locator('.info .title', { hasText: '2.3.0' }).waitFor();
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => block.id))).toEqual([
      'operations-pets-listPets',
      'operations-pets-createPet',
      'operations-pets-exportPets',
      'operations-pets-getPet',
      'operations-pets-updatePet',
      'operations-store-listStoreOrders',
      'operations-store-placeOrder',
      'operations-store-getOrder',
      'operations-store-updateOrder',
    ]);
    expect(await page.locator('.servers select').inputValue()).toBe('/v2');
    await authorize(page, key);
    const { status, body, sent } = await tryIt(page, 'listPets', '/v2');
    expect(status).toBe('200');
    expect(JSON.parse(body)).toEqual(stored);
    expect(sent.url()).toBe(`${server.url}/v2/pets?limit=20`);
    await authorize(page, undefined);
    await versions.selectOption({ label: 'v1 (1.2.0)' });
    await page.locator('.info .title', { hasText: '1.2.0' }).waitFor();
  });

  it('raised no CSP violation, page error or console error', () => {
    expect(problems).toEqual([]);
  });
});

describeInBrowser('/docs opened over plain HTTP under another host name (a staging box, a container)', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    ({ server } = await serverWithPets());
    // staging.test is this machine: not a loopback name, so chromium treats plain HTTP as insecure, as it would a staging host.
    browser = await launchChromium(['--host-resolver-rules=MAP staging.test 127.0.0.1']);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders and "Try it out" calls that host (no upgrade of its requests to HTTPS)', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    // Chromium says it ignores helmet's Cross-Origin-Opener-Policy on an insecure origin; that is expected over HTTP.
    await watchProblems(page, problems, [/Cross-Origin-Opener-Policy header has been ignored/]);
    const origin = `http://staging.test:${server.port}`;
    const response = await page.goto(`${origin}/docs/`);
    expect(response?.headers()['content-security-policy']).not.toContain('upgrade-insecure-requests');
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').count()).toBe(4);
    const { status, sent } = await tryIt(page, 'listPets');
    expect(status).toBe('401'); // no key given: the answer of this host, over HTTP
    expect(sent.url()).toBe(`${origin}/v1/pets?limit=20`);
    expect(problems.filter((problem) => !/status of 401/.test(problem))).toEqual([]);
  });
});

describeInBrowser('/docs of a document written elsewhere (Scalar Galaxy as v3): "Authorize" with its declared scheme', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  const problems: string[] = [];

  beforeAll(async () => {
    const root = copyProject();
    mkdirSync(path.join(root, 'openapi/v3'), { recursive: true });
    copyFileSync(path.join(PROJECT_ROOT, 'test/fixtures/third-party/scalar-galaxy-3.1.yaml'), path.join(root, 'openapi/v3/openapi.yaml'));
    for (const script of ['generate', 'scaffold']) expect(runNpm(root, script)).toMatchObject({ status: 0 });
    const databaseUrl = `sqlite:${tempDir()}/pets.db`;
    const storage = await openStorage(databaseUrl);
    ({ key } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'browser' }));
    await storage.close();
    server = await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' }, { projectRoot: root });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await watchProblems(page, problems, [/^Failed to load resource: the server responded with a status of (401|501)/]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Opens getMe, "Try it out" and "Execute"; the shown status and the request sent. */
  async function tryGetMe(target: Page): Promise<{ status: string; body: string; sent: Request }> {
    const operation = target.locator('#operations-Authentication-getMe');
    if (!(await operation.locator('.opblock-body').isVisible())) await operation.locator('.opblock-summary').click();
    const tryOut = operation.locator('button.try-out__btn');
    if ((await tryOut.textContent())?.includes('Try it out')) await tryOut.click();
    const answered = target.waitForResponse((response) => new URL(response.url()).pathname === '/v3/me');
    await operation.locator('button.execute').click();
    const sent = (await answered).request();
    const shown = operation.locator('.live-responses-table tbody tr.response');
    await shown.waitFor();
    return {
      status: (await shown.locator('.response-col_status').textContent())!.trim(),
      body: (await shown.locator('.response-col_description pre').first().textContent())!,
      sent,
    };
  }

  /** Opens /docs on v3. */
  async function openV3(target: Page): Promise<void> {
    await target.goto(`${server.url}/docs`);
    const versions = target.locator('.topbar select');
    await versions.locator('option').first().waitFor({ state: 'attached' });
    await versions.selectOption({ label: 'v3 (0.2.20)' });
    await target.locator('.info .title', { hasText: 'Scalar Galaxy' }).waitFor();
    expect(await target.locator('.servers select').inputValue()).toBe('/v3');
  }

  it('publishes the declared schemes; the key given to apiKeyHeader goes as X-API-Key and passes (501: a stub)', async () => {
    await openV3(page);

    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    const headings = await dialog.locator('.auth-container h4').allTextContents();
    for (const scheme of ['bearerAuth', 'basicAuth', 'apiKeyHeader', 'apiKeyQuery', 'apiKeyCookie', 'oAuth2']) {
      expect(headings.some((heading) => heading.includes(scheme))).toBe(true);
    }
    const apiKeyHeader = dialog.locator('.auth-container', { has: page.locator('h4', { hasText: 'apiKeyHeader' }) });
    await apiKeyHeader.locator('input').first().fill(key);
    await apiKeyHeader.locator('button.authorize').click();
    await dialog.locator('button.btn-done').first().click();

    const { status, body, sent } = await tryGetMe(page);
    expect(await sent.headerValue('x-api-key')).toBe(key);
    expect(status).toMatch(/^501\b/); // "501 Undocumented": the document does not declare the stub's status
    expect(JSON.parse(body)).toMatchObject({ code: 'not_implemented', status: 501 });
  });

  it('with basicAuth, the key as the user name goes as Authorization: Basic base64(key:) and passes', async () => {
    // (Not tried without credentials here: a 401 carrying a Basic challenge makes the browser prompt for a password,
    // as it should; the v1 tests above show /docs' 401, test/security-schemes.test.ts the challenges.)
    const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await watchProblems(other, problems, [/^Failed to load resource: the server responded with a status of 501/]);
    await openV3(other);
    await other.locator('.auth-wrapper button.authorize').click();
    const dialog = other.locator('.modal-ux');
    const basicAuth = dialog.locator('.auth-container', { has: other.locator('h4', { hasText: 'basicAuth' }) });
    await basicAuth.locator('input').first().fill(key);
    await basicAuth.locator('button.authorize').click();
    await dialog.locator('button.btn-done').first().click();
    const { status, sent } = await tryGetMe(other);
    expect(await sent.headerValue('authorization')).toBe(`Basic ${Buffer.from(`${key}:`).toString('base64')}`);
    expect(status).toMatch(/^501\b/);
    await other.close();
  });

  it('raised no page error, and the CSP blocked only what the document points at elsewhere', () => {
    // The document's description shows an image from another site and its openIdConnect scheme names a discovery URL
    // there: /docs may load and call this origin only, so both are blocked (and the page goes on).
    const elsewhere = /images\.placeholders\.dev|galaxy\.scalar\.com|^console error: TypeError: Failed to fetch/;
    expect(problems.filter((problem) => !elsewhere.test(problem))).toEqual([]);
  });
});

describeInBrowser('/docs of an OpenAPI 3.2 document (the project library fixture as v3)', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    const root = copyProject();
    mkdirSync(path.join(root, 'openapi/v3'), { recursive: true });
    copyFileSync(path.join(PROJECT_ROOT, 'test/fixtures/openapi-3.2/library-3.2.yaml'), path.join(root, 'openapi/v3/openapi.yaml'));
    for (const script of ['generate', 'scaffold']) expect(runNpm(root, script)).toMatchObject({ status: 0 });
    server = await startServer({ DATABASE_URL: `sqlite:${tempDir()}/pets.db`, NODE_ENV: 'production' }, { projectRoot: root });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await watchProblems(page, problems, []);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders it as written: the QUERY method and the additional PURGE beside the other operations, tags under their parents, no page error', async () => {
    await page.goto(`${server.url}/docs`);
    const versions = page.locator('.topbar select');
    await versions.locator('option').first().waitFor({ state: 'attached' });
    await versions.selectOption({ label: 'v3 (1.0.0)' });
    await page.locator('.info .title', { hasText: 'Library' }).waitFor();
    await page.locator('.opblock').first().waitFor();
    const shown = await page
      .locator('.opblock')
      .evaluateAll((blocks) => blocks.map((block) => `${block.querySelector('.opblock-summary-method')?.textContent} ${block.id}`));
    expect(shown).toEqual(
      expect.arrayContaining(['QUERY operations-books_›_search-searchBooks', 'PURGE operations-books-purgeBooks', 'GET operations-books-followBooks']),
    );
    // Tags with a parent: the child named by its path, after its parent.
    const tags = await page.locator('.opblock-tag-section h3').evaluateAll((headings) => headings.map((heading) => heading.getAttribute('data-tag')));
    expect(tags).toEqual(['books', 'books › search']);
    expect(problems).toEqual([]);
  });
});
