/** One comparison: the classified changes between two loaded contracts and the gate's verdict on them. */
import { diffContracts, type DiffOptions } from './diff-contracts';
import type { LoadedContract } from './load-contract';
import type { ComparisonResult } from './report';
import { sunsetRemovals, withSunsetReasons } from './sunset';
import { evaluateGate } from './version-gate';

export interface CompareOptions extends DiffOptions {
  /**
   * The day (YYYY-MM-DD, UTC) sunset dates are judged by: the commands pass
   * today (today.ts), the changelog a release's own date. Undefined: no day to
   * judge by (a release without a recorded date), so no removal is excused by
   * its sunset and none is refused by name; the major-version gate alone decides.
   */
  today?: string;
}

/**
 * Compares `head` with `base` and evaluates the gate.
 *
 * @example
 * compareContracts(loadContractFile('openapi/v1/releases/1.0.0.yaml'), loadContractFile('openapi/v1/openapi.yaml'), { today: '2026-11-23' }).gate.passed; // true
 */
export function compareContracts(base: LoadedContract, head: LoadedContract, options: CompareOptions = {}): ComparisonResult {
  const classified = diffContracts(base.document, head.document, options);
  const removals = options.today === undefined ? [] : sunsetRemovals(base.document, classified, options.today);
  const changes = withSunsetReasons(classified, removals);
  return {
    base: { source: base.label, version: base.document.info.version },
    head: { source: head.label, version: head.document.info.version },
    changes,
    gate: evaluateGate(base.document.info.version, head.document.info.version, changes, removals),
  };
}
