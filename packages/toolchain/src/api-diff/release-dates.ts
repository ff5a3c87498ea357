/**
 * The date of each release: `releases/index.json`, next to the snapshots,
 * `{ "<version>": { "date": "YYYY-MM-DD" } }`, written by `npm run api:release`.
 * Committed, so the changelog is the same in every clone; not a file's mtime
 * (a clone resets it) nor git history (a squash or an export loses it); and
 * not inside the snapshot, which stays a byte-for-byte copy of the contract
 * as released (an added `info.x-release-date` would also show up as a change
 * in every comparison with it).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { ContractSourceError } from './load-contract';
import { isIsoDate } from './today';

export const RELEASE_INDEX = 'index.json';

/** Version -> release date (YYYY-MM-DD). */
export type ReleaseDates = Record<string, string>;

/**
 * The recorded dates; {} when the folder has no index yet (releases made
 * before dates were recorded). A malformed index is a ContractSourceError.
 *
 * @example
 * readReleaseDates('openapi/v1/releases'); // { '1.0.0': '2026-11-22' }
 */
export function readReleaseDates(dir: string, label: string = path.join(dir, RELEASE_INDEX)): ReleaseDates {
  const file = path.join(dir, RELEASE_INDEX);
  if (!existsSync(file)) return {};
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ContractSourceError(`${label} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof index !== 'object' || index === null || Array.isArray(index))
    throw new ContractSourceError(`${label} must be an object of { "<version>": { "date": "YYYY-MM-DD" } }`);
  const dates: ReleaseDates = {};
  for (const [version, entry] of Object.entries(index)) {
    if (semver.valid(version) !== version) throw new ContractSourceError(`${label}: ${JSON.stringify(version)} is not a semver version`);
    const date = (entry as { date?: unknown } | null)?.date;
    if (!isIsoDate(date)) throw new ContractSourceError(`${label}: ${version} has no "date": "YYYY-MM-DD"`);
    dates[version] = date;
  }
  return dates;
}

/**
 * Records `version` as released on `date`, keeping the index in semver order
 * (so a new release is a one-entry diff).
 *
 * @example
 * recordReleaseDate('openapi/v1/releases', '1.1.0', '2027-01-15');
 */
export function recordReleaseDate(dir: string, version: string, date: string): void {
  const dates = { ...readReleaseDates(dir), [version]: date };
  const ordered = Object.keys(dates).sort(semver.compare);
  const index = Object.fromEntries(ordered.map((key) => [key, { date: dates[key] }]));
  writeFileSync(path.join(dir, RELEASE_INDEX), `${JSON.stringify(index, null, 2)}\n`);
}
