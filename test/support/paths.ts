import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
// One per checkout: global-setup empties it, which must not delete the files of another checkout's running tests.
export const TEST_TMP_ROOT = path.join(os.tmpdir(), `pet-adoption-api-tests-${createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 8)}`);

/** A fresh folder for one test's database files. */
export const tempDir = (): string => mkdtempSync(path.join(TEST_TMP_ROOT, 'run-'));
