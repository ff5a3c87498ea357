import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { TEST_TMP_PARENT } from './paths';

/** One scratch folder per test run for SQLite files; the workers inherit its path. */
export default function globalSetup(): void {
  process.env['PET_ADOPTION_TEST_TMP'] = mkdtempSync(path.join(TEST_TMP_PARENT, 'pet-adoption-api-tests-'));
}
