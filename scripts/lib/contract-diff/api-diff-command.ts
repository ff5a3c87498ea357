/**
 * `npm run api:diff`: the working contract against a base, every change
 * classified, and the gate's verdict as the exit code. `--today` (default
 * `$API_DIFF_TODAY`, else the real date) is the day sunset dates are judged by.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SPEC_PATH } from '../../../src/contract/load-spec';
import type { CommandOutcome } from './command-io';
import { compareContracts } from './compare-contracts';
import { ContractSourceError, displayPath, loadBase, loadContractFile } from './load-contract';
import { RENDERERS, REPORT_FORMATS, type ReportFormat } from './report';
import { resolveToday } from './today';

export const API_DIFF_USAGE = 'usage: npm run api:diff -- [--base <git ref or file>] [--spec <file>] [--format text|json|markdown] [--library-only] [--today YYYY-MM-DD]';

/**
 * Runs `api:diff` with command-line arguments, in-process.
 *
 * @example
 * const { exitCode, stdout } = runApiDiff(['--base', 'HEAD', '--format', 'markdown'], process.cwd());
 * runApiDiff(['--today', '2030-12-05'], process.cwd()); // a removal of getPet (x-sunset 2030-12-05) is now allowed in 1.x
 */
export function runApiDiff(args: readonly string[], cwd: string): CommandOutcome {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        base: { type: 'string' },
        spec: { type: 'string' },
        format: { type: 'string', default: 'text' },
        'library-only': { type: 'boolean', default: false },
        today: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { exitCode: 2, stdout: '', stderr: `api:diff: ${(error as Error).message}\n${API_DIFF_USAGE}\n` };
  }
  const format = values.format as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) {
    return { exitCode: 2, stdout: '', stderr: `api:diff: --format must be one of ${REPORT_FORMATS.join(', ')}\n` };
  }
  const day = resolveToday(values.today);
  if ('error' in day) return { exitCode: 2, stdout: '', stderr: `api:diff: ${day.error}\n` };
  const specPath = values.spec === undefined ? SPEC_PATH : path.resolve(cwd, values.spec);
  try {
    const head = loadContractFile(specPath, displayPath(cwd, specPath));
    const base = loadBase(values.base, specPath, cwd);
    const result = compareContracts(base, head, { ownRules: !values['library-only'], today: day.today });
    return { exitCode: result.gate.passed ? 0 : 1, stdout: RENDERERS[format](result), stderr: '' };
  } catch (error) {
    if (error instanceof ContractSourceError) return { exitCode: 2, stdout: '', stderr: `api:diff: ${error.message}\n` };
    throw error;
  }
}
