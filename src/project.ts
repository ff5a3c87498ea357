import { existsSync } from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'openapi', 'v1', 'openapi.yaml'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`openapi/v1/openapi.yaml not found above ${start}`);
  }
}

/** The project's root (where `openapi/` is); found by walking up so it works from `src/` and from `dist/`. */
export const PROJECT_ROOT = findProjectRoot(__dirname);

/** The folder of the contract: one `vN/openapi.yaml` per major version. */
export const OPENAPI_DIR = path.join(PROJECT_ROOT, 'openapi');

/** The first major version's contract, the default document (`/openapi.json` publishes it). */
export const SPEC_PATH = path.join(OPENAPI_DIR, 'v1', 'openapi.yaml');
