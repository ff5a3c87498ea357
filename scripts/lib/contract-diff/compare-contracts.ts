/** One comparison: the classified changes between two loaded contracts and the gate's verdict on them. */
import { diffContracts, type DiffOptions } from './diff-contracts';
import type { LoadedContract } from './load-contract';
import type { ComparisonResult } from './report';
import { evaluateGate } from './version-gate';

/**
 * Compares `head` with `base` and evaluates the gate.
 *
 * @example
 * compareContracts(loadContractFile('openapi/releases/1.0.0.yaml'), loadContractFile('openapi/openapi.yaml')).gate.passed; // true
 */
export function compareContracts(base: LoadedContract, head: LoadedContract, options: DiffOptions = {}): ComparisonResult {
  const changes = diffContracts(base.document, head.document, options);
  return {
    base: { source: base.label, version: base.document.info.version },
    head: { source: head.label, version: head.document.info.version },
    changes,
    gate: evaluateGate(base.document.info.version, head.document.info.version, changes),
  };
}
