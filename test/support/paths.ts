import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
export const TEST_TMP_ROOT = path.join(os.tmpdir(), 'pet-adoption-api-tests');

/** A fresh folder for one test's database files. */
export const tempDir = (): string => mkdtempSync(path.join(TEST_TMP_ROOT, 'run-'));
