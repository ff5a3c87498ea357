/**
 * The contract test `npm test` runs: the real server on a free port, with a
 * key of its own, checked from outside against every document under
 * openapi/ by the contract fuzzer (valid requests, invalid ones, missing
 * credentials). A stub's 501 not_implemented is reported as skipped, so this
 * passes as generated and keeps passing while the handlers are written.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { documentsIn } from '@spec-first/engine';
import { loadBundledContract, runContract } from '@spec-first/toolchain';
import { createApp, ROOT } from '../src/app';
import { keyStore } from '../src/keys';
import { settingsOf } from '../src/settings';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'contract-test-'));
const keysFile = path.join(scratch, 'keys.jsonl');
let server: Server;
let origin: string;
let key: string;

beforeAll(async () => {
  key = keyStore(keysFile).create('contract test').key;
  const engine = await createApp({ ...settingsOf({}), keysFile });
  server = engine.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

test('serves /healthz, the published document and /docs', async () => {
  expect((await fetch(`${origin}/healthz`)).status).toBe(200);
  const published = await fetch(`${origin}/openapi.json`);
  expect(published.status).toBe(200);
  expect(await published.json()).toHaveProperty('openapi');
  expect((await fetch(`${origin}/docs/`)).status).toBe(200);
});

test('an unknown path is a 404 Error object', async () => {
  const response = await fetch(`${origin}/no/such/path`);
  expect(response.status).toBe(404);
  expect(await response.json()).toMatchObject({ code: expect.any(String), message: expect.any(String), status: 404 });
});

for (const version of documentsIn(path.join(ROOT, 'openapi'))) {
  test(`every operation of ${path.relative(ROOT, version.document)} answers as it declares`, async () => {
    const contract = await loadBundledContract(version.document, `/${version.name}`);
    const result = await runContract({
      baseUrl: `${origin}/${version.name}`,
      key,
      specFile: version.document,
      contract,
      seed: 1,
      maxExamples: 3,
      rate: 1000,
      timeLimitSeconds: 240,
    });
    const failed = result.cases
      .filter((run) => run.outcome === 'failed')
      .map((run) => `${run.operationId} ${run.label}: ${JSON.stringify(run.failures)}\n  ${run.curl}`);
    expect(failed).toEqual([]);
    expect(result.stoppedReason).toBeUndefined();
    expect(result.passed).toBeGreaterThan(0);
  }, 300_000);
}
