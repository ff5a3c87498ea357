import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { browserMissing, launchChromium } from './support/browser';
import { startServer, type RunningServer } from './support/processes';
import { PROJECT_ROOT, tempDir } from './support/paths';
import { openStorage } from '../src/storage/open-storage';
import { issueApiKey } from '../src/keys/api-key-service';
import type { Pet } from '../src/storage/storage';

/**
 * /docs in a real browser (Debian's chromium, driven by playwright-core)
 * against the real server: the page renders the contract, defaults to this
 * server, and "Try it out" returns this server's data with helmet's CSP on.
 */
const missing = browserMissing();
const describeInBrowser = missing ? describe.skip : describe;
export const SCREENSHOT = path.join(PROJECT_ROOT, 'test-artifacts', 'docs.png');

describeInBrowser('/docs in Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  const stored: Pet[] = [];
  /** Console errors, page errors and CSP violations, as they happen. */
  const problems: string[] = [];
  /** What chromium logs for a response it got with this status (not a page problem when the test asked for it). */
  const expectedStatusLogs = new Set<number>();

  beforeAll(async () => {
    const databaseUrl = `sqlite:${tempDir()}/pets.db`;
    const storage = await openStorage(databaseUrl);
    stored.push(await storage.pets.create({ name: 'Biscuit', categoryId: 1, status: 'available' }));
    stored.push(await storage.pets.create({ name: 'Marmalade', categoryId: 2, status: 'pending' }));
    key = (await issueApiKey(storage.apiKeys, { plan: 'free', label: 'browser' })).key;
    await storage.close();
    server = await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const status = /status of (\d{3})/.exec(message.text())?.[1];
      if (status && expectedStatusLogs.has(Number(status))) return;
      problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // Reported by the page itself, besides chromium's own console message.
    await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
    // (A string: this runs in the page, which the Node typings of the tests do not describe.)
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (event) =>
        window.reportCspViolation(event.violatedDirective + ' blocked ' + event.blockedURI));`,
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Opens an operation, presses "Try it out" (once) and "Execute"; resolves with the shown status and body. */
  async function tryIt(operationId: string): Promise<{ status: string; body: string; sent: Request }> {
    const operation = page.locator(`#operations-pets-${operationId}`);
    if (!(await operation.locator('.opblock-body').isVisible())) await operation.locator('.opblock-summary').click();
    const tryOut = operation.locator('button.try-out__btn');
    if ((await tryOut.textContent())?.includes('Try it out')) await tryOut.click();
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/pets');
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
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.locator('input').first().fill(key);
    await dialog.locator('button.authorize').click();
    await dialog.locator('button.btn-done').click();
    const { status, body, sent } = await tryIt('listPets');
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
    expectedStatusLogs.add(401);
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.locator('button', { hasText: 'Logout' }).click();
    await dialog.locator('button.btn-done').click();
    const { status, body, sent } = await tryIt('listPets');
    expect(await sent.headerValue('authorization')).toBeNull();
    expect(status).toBe('401');
    expect(JSON.parse(body)).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('raised no CSP violation, page error or console error', () => {
    expect(problems).toEqual([]);
  });
});
