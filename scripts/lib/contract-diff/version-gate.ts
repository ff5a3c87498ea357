/**
 * The gate: a breaking change is allowed only when it is announced by raising
 * the major of `info.version` above the base's (semver).
 */
import semver from 'semver';
import type { ContractChange } from './change';

export interface GateVerdict {
  baseVersion: string;
  headVersion: string;
  breaking: number;
  /** The major of `info.version` is higher than the base's (false when either is not semver). */
  majorBumped: boolean;
  passed: boolean;
  /** One sentence for the reader. */
  summary: string;
}

/**
 * @example
 * evaluateGate('1.0.0', '1.1.0', changes);
 * // { breaking: 1, majorBumped: false, passed: false, summary: '1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major: ...' }
 */
export function evaluateGate(baseVersion: string, headVersion: string, changes: readonly ContractChange[]): GateVerdict {
  const breaking = changes.filter((change) => change.class === 'breaking').length;
  const bothSemver = semver.valid(baseVersion) !== null && semver.valid(headVersion) !== null;
  const majorBumped = bothSemver && semver.major(headVersion) > semver.major(baseVersion);
  const versions = `info.version ${baseVersion} → ${headVersion}`;
  const count = `${breaking} breaking change${breaking === 1 ? '' : 's'}`;
  let summary: string;
  if (breaking === 0) summary = changes.length === 0 ? 'no changes' : 'no breaking changes';
  else if (majorBumped) summary = `${count}, announced by a major version bump (${versions})`;
  else if (!bothSemver) summary = `${count}, and ${versions} is not a pair of semver versions, so no major bump can announce them`;
  else summary = `${count} and ${versions} does not raise the major: set info.version to ${semver.major(baseVersion) + 1}.0.0 to announce them, or undo them`;
  return { baseVersion, headVersion, breaking, majorBumped, passed: breaking === 0 || majorBumped, summary };
}
