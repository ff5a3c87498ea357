import { mkdirSync, rmSync } from 'node:fs';
import { TEST_TMP_ROOT } from './paths';

/** One scratch folder per test run for SQLite files. */
export default function globalSetup(): void {
  rmSync(TEST_TMP_ROOT, { recursive: true, force: true });
  mkdirSync(TEST_TMP_ROOT, { recursive: true });
}
