/**
 * The release record read whole: every snapshot in a releases folder, loaded,
 * oldest first, each with its recorded date. What the changelog is made of.
 */
import path from 'node:path';
import { RELEASE_INDEX, readReleaseDates } from './release-dates';
import { listReleases } from './releases';
import { loadContractFile, type LoadedContract } from './load-contract';

export interface ReleasedContract {
  version: string;
  /** YYYY-MM-DD from releases/index.json; undefined for a release made before dates were recorded. */
  date: string | undefined;
  contract: LoadedContract;
}

/**
 * Loads the record; `label` names a file for messages (a ContractSourceError
 * for a snapshot that does not parse, or a malformed index).
 *
 * @example
 * await loadReleaseRecord('openapi/v1/releases'); // [{ version: '1.0.0', date: '2026-11-22', contract: { label: 'openapi/v1/releases/1.0.0.yaml', document } }]
 */
export async function loadReleaseRecord(dir: string, label: (file: string) => string = (file) => file): Promise<ReleasedContract[]> {
  const dates = readReleaseDates(dir, label(path.join(dir, RELEASE_INDEX)));
  return Promise.all(
    listReleases(dir).map(async ({ version, file }) => ({ version, date: dates[version], contract: await loadContractFile(file, label(file)) })),
  );
}
