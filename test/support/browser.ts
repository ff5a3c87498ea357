import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. Under
 * CI=true a missing browser is an error (thrown when the suite loads), as a
 * missing PostgreSQL is in jest.config.ts: CI must run them.
 */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  const why = `no browser at ${CHROMIUM_PATH} (apt-get install chromium)`;
  if (process.env['CI'] === 'true') throw new Error(`CI must run the browser tests, but there is ${why}; .ci/run installs it.`);
  console.warn(`\n*** SKIPPED: the browser tests (test/docs-browser.test.ts): ${why}.\n`);
  return why;
}

/**
 * Headless chromium. Background networking, component updates, sync and QUIC
 * are off: the browser talks to the server under test only (this machine's
 * network is closed, and its refused connections would otherwise show up).
 *
 * @example const browser = await launchChromium(['--host-resolver-rules=MAP staging.test 127.0.0.1']);
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
