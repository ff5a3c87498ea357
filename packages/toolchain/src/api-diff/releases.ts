/**
 * The release record: a committed snapshot of the contract per released
 * version, `openapi/v1/releases/<version>.yaml` (next to the contract), written by
 * `npm run api:release`. Plain files, so a fresh clone with no remote and no
 * tags still knows what was released.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

export interface Release {
  version: string;
  file: string;
}

/** `openapi/v1/releases` for `openapi/v1/openapi.yaml`. */
export const releasesDirOf = (specPath: string): string => path.join(path.dirname(specPath), 'releases');

/**
 * The recorded releases, oldest first by semver (files not named `<semver>.yaml` are ignored).
 *
 * @example
 * listReleases('openapi/v1/releases'); // [{ version: '1.0.0', file: 'openapi/v1/releases/1.0.0.yaml' }]
 */
export function listReleases(dir: string): Release[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => ({ version: name.replace(/\.yaml$/, ''), file: path.join(dir, name) }))
    .filter(({ version, file }) => file.endsWith('.yaml') && semver.valid(version) === version)
    .sort((a, b) => semver.compare(a.version, b.version));
}

/** The newest recorded release, or undefined when none is. */
export const newestRelease = (dir: string): Release | undefined => listReleases(dir).at(-1);
