/**
 * The gate: a breaking change is allowed only when it is announced, by
 * raising the major of `info.version` above the base's (semver), or, for the
 * removal of a deprecated operation, by its `Sunset` header once that date has
 * come (sunset.ts). Within a major version, a removal before its sunset date
 * is refused by name.
 */
import semver from 'semver';
import { operationLabel, type ContractChange } from './change';
import type { SunsetRemoval } from './sunset';

export interface GateVerdict {
  baseVersion: string;
  headVersion: string;
  breaking: number;
  /** The major of `info.version` is higher than the base's (false when either is not semver). */
  majorBumped: boolean;
  /** Removed operations the base had deprecated with a sunset date, each judged against today. */
  sunsetRemovals: SunsetRemoval[];
  passed: boolean;
  /** One sentence for the reader. */
  summary: string;
}

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/**
 * @example
 * evaluateGate('1.0.0', '1.1.0', changes);
 * // { breaking: 1, majorBumped: false, passed: false, summary: '1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major: ...' }
 * evaluateGate('1.0.0', '1.1.0', [getPetRemoved], [{ operationId: 'getPet', sunset: '2030-12-05', due: false, ... }]);
 * // { passed: false, summary: 'getPet (GET /pets/{petId}) is removed before its sunset date, 2030-12-05: ...' }
 */
export function evaluateGate(
  baseVersion: string,
  headVersion: string,
  changes: readonly ContractChange[],
  sunsetRemovals: readonly SunsetRemoval[] = [],
): GateVerdict {
  const breaking = changes.filter((change) => change.class === 'breaking').length;
  const bothSemver = semver.valid(baseVersion) !== null && semver.valid(headVersion) !== null;
  const majorBumped = bothSemver && semver.major(headVersion) > semver.major(baseVersion);
  const versions = `info.version ${baseVersion} → ${headVersion}`;
  const verdict = (passed: boolean, summary: string): GateVerdict => ({
    baseVersion,
    headVersion,
    breaking,
    majorBumped,
    sunsetRemovals: [...sunsetRemovals],
    passed,
    summary,
  });

  if (breaking === 0) return verdict(true, changes.length === 0 ? 'no changes' : 'no breaking changes');
  // A new major is a new contract: what it drops, the old major keeps serving (until its sunset).
  if (majorBumped) return verdict(true, `${plural(breaking, 'breaking change')}, announced by a major version bump (${versions})`);

  const due = sunsetRemovals.filter((removal) => removal.due);
  const early = sunsetRemovals.filter((removal) => !removal.due);
  const others = breaking - sunsetRemovals.length;
  if (early.length === 0 && others === 0) {
    const announced = due.map((removal) => `${operationLabel(removal)} on ${removal.sunset}`).join(', ');
    return verdict(true, `${plural(breaking, 'breaking change')}, announced by the Sunset header of ${announced}`);
  }
  const parts = early.map(
    (removal) =>
      `${operationLabel(removal)} is removed before its sunset date, ${removal.sunset}: its Sunset header promised clients it works until then; keep it until ${removal.sunset}, or remove it in a new major version`,
  );
  if (others > 0) {
    const count = early.length > 0 ? plural(others, 'other breaking change') : plural(others, 'breaking change');
    parts.push(
      bothSemver
        ? `${count} and ${versions} does not raise the major: set info.version to ${semver.major(baseVersion) + 1}.0.0 to announce them, or undo them`
        : `${count}, and ${versions} is not a pair of semver versions, so no major bump can announce them`,
    );
  }
  return verdict(false, parts.join('; '));
}
