import { rmSync } from 'node:fs';
import { testTmpRoot } from './paths';

/** The run's scratch folder goes with it (a failed run's files are gone too: rerun the test to look). */
export default function globalTeardown(): void {
  rmSync(testTmpRoot(), { recursive: true, force: true });
}
