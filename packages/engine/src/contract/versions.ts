import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** One major version of the contract: its name (`v1`), its document, where its releases and changelog live. */
export interface ContractVersionFiles {
  readonly name: string;
  readonly document: string;
  readonly releases: string;
  readonly changelog: string;
}

/** The folders of the major versions: `openapi/v1/`, `openapi/v2/`, ... */
const VERSION_FOLDER = /^v(\d+)$/;

/**
 * Every major version of the contract, oldest first: each `openapi/vN/` with
 * an `openapi.yaml` (or `.yml`, `.json`: the source of truth of that version), its release
 * snapshots in `openapi/vN/releases/` and its `CHANGELOG.md`. The toolchain
 * (generate, scaffold, lint, api:diff, api:release, the mock, the server)
 * works on each.
 *
 * @example contractVersions(PROJECT_ROOT).map((version) => version.name) // ['v1', 'v2']
 */
export function contractVersions(root: string): ContractVersionFiles[] {
  return contractVersionsIn(path.join(root, 'openapi'));
}

/**
 * The major versions in a folder laid out as openapi/ (`OPENAPI_DIR`: npm run
 * dev serves its last good copy of the contract from one).
 *
 * @example contractVersionsIn('dist/dev/contract')
 */
export function contractVersionsIn(openapi: string): ContractVersionFiles[] {
  return readdirSync(openapi, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && VERSION_FOLDER.test(entry.name))
    .map((entry) => ({ name: entry.name, file: rootFileOf(path.join(openapi, entry.name)) }))
    .filter((found): found is { name: string; file: string } => found.file !== undefined)
    .sort((a, b) => Number(VERSION_FOLDER.exec(a.name)![1]) - Number(VERSION_FOLDER.exec(b.name)![1]))
    .map(({ name, file }) => ({
      name,
      document: path.join(openapi, name, file),
      releases: path.join(openapi, name, 'releases'),
      changelog: path.join(openapi, name, 'CHANGELOG.md'),
    }));
}

/** A document written as JSON keeps its format: `openapi.yaml`, else `openapi.yml`, else `openapi.json`. */
const ROOT_FILES = ['openapi.yaml', 'openapi.yml', 'openapi.json'];

function rootFileOf(folder: string): string | undefined {
  return ROOT_FILES.find((name) => existsSync(path.join(folder, name)));
}
