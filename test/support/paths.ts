import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/**
 * The scratch folder of this test run, made by global-setup.ts and handed to
 * the workers in the environment: one per run, so runs side by side (another
 * checkout, the Node 22 copy) never delete each other's databases.
 */
export function testTmpRoot(): string {
  const root = process.env['PET_ADOPTION_TEST_TMP'];
  if (!root) throw new Error('PET_ADOPTION_TEST_TMP is not set: run the tests through jest (test/support/global-setup.ts)');
  return root;
}

/** A fresh folder for one test's database files. */
export const tempDir = (): string => mkdtempSync(path.join(testTmpRoot(), 'run-'));

/** Where global-setup.ts makes the folder of a run. */
export const TEST_TMP_PARENT = os.tmpdir();
