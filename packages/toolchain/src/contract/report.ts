/**
 * What a run prints and writes: each failure as a curl command with what was
 * expected and what came back, the skipped operations, one line per
 * operation, and last the summary line `N passed, M failed`.
 */
import { writeFileSync } from 'node:fs';
import type { ContractResult } from './runner';

/**
 * The human report, one string per line.
 *
 * @example formatReport(result).at(-1) // '214 passed, 0 failed'
 */
export function formatReport(result: ContractResult): string[] {
  const lines: string[] = [];
  const failures = result.cases.filter((c) => c.outcome === 'failed');
  if (failures.length > 0) lines.push('', 'In the curl commands, $API_KEY is the key given with --key.');
  for (const failed of failures) {
    for (const failure of failed.failures) {
      lines.push('', `FAIL ${failure.check}: ${failed.operationId} (${failed.kind}) ${failed.label}`);
      lines.push(`  ${failed.curl}`);
      lines.push(`  expected: ${failure.expected}`);
      lines.push(`  got:      ${failure.got}`);
    }
  }
  lines.push('');
  for (const operationId of result.notImplemented) {
    lines.push(`SKIP ${operationId}: operation not implemented (501 not_implemented); its valid requests were not checked further`);
  }
  for (const [operationId, counts] of Object.entries(result.byOperation)) {
    lines.push(`${operationId}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
  lines.push(
    `${result.requestsSent} requests in ${(result.durationMs / 1000).toFixed(1)} s, ${result.rateLimitedWaits} waits on 429; seed ${result.seed} (replay with --seed ${result.seed})`,
  );
  if (result.stoppedReason) lines.push(`INCOMPLETE: stopped early (${result.stoppedReason}); ${result.notRun} cases not run`);
  lines.push(`${result.passed} passed, ${result.failed} failed`);
  return lines;
}

/** Writes the machine-readable report (the whole result, no key). */
export function writeJsonReport(file: string, result: ContractResult): void {
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
}
