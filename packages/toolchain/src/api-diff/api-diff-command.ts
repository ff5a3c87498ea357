/**
 * `npm run api:diff`: the working contract against a base, every change
 * classified, and the gate's verdict as the exit code. `--today` (default
 * `$API_DIFF_TODAY`, else the real date) is the day sunset dates are judged by.
 * With neither `--spec` nor `--version`, every major version
 * (`openapi/vN/openapi.yaml`) is compared with its own newest release (or with
 * `--base <git ref>`), each under a header; exit 1 when any fails.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CommandOutcome } from './command-io';
import { compareContracts } from './compare-contracts';
import { chooseDocuments, type ChoiceFlags, type ChosenDocument } from './contract-choice';
import { ContractSourceError, displayPath, loadBase, loadContractFile } from './load-contract';
import { RENDERERS, REPORT_FORMATS, type ComparisonResult, type ReportFormat } from './report';
import { resolveToday } from './today';

export const API_DIFF_USAGE =
  'usage: npm run api:diff -- [--version vN | --spec <file>] [--base <git ref or file>] [--format text|json|markdown] [--library-only] [--today YYYY-MM-DD]';

const worst = (codes: Array<0 | 1 | 2>): 0 | 1 | 2 => (codes.includes(2) ? 2 : codes.includes(1) ? 1 : 0);

/**
 * Runs `api:diff` with command-line arguments, in-process. `root` is the
 * project whose versions are compared when no document is named.
 *
 * @example
 * await runApiDiff([], process.cwd());                                   // every version against its newest release
 * await runApiDiff(['--version', 'v2'], process.cwd());                  // openapi/v2/openapi.yaml against openapi/v2/releases
 * await runApiDiff(['--base', 'openapi/v1/openapi.yaml', '--spec', 'openapi/v2/openapi.yaml'], process.cwd()); // across versions
 * const { exitCode, stdout } = runApiDiff(['--base', 'HEAD', '--format', 'markdown'], process.cwd());
 * await runApiDiff(['--version', 'v1', '--today', '2030-12-05'], process.cwd()); // a removal of getPet (x-sunset 2030-12-05) is now allowed in 1.x
 */
export async function runApiDiff(args: readonly string[], cwd: string, root: string = cwd): Promise<CommandOutcome> {
  let values: ChoiceFlags & { base?: string | undefined; format: string; 'library-only': boolean; today?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        base: { type: 'string' },
        spec: { type: 'string' },
        version: { type: 'string' },
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
  const choice = chooseDocuments(values, cwd, root);
  if ('error' in choice) return { exitCode: 2, stdout: '', stderr: `api:diff: ${choice.error}\n${API_DIFF_USAGE}\n` };
  const options = { base: values.base, ownRules: !values['library-only'], today: day.today };
  if ('single' in choice) {
    const outcome = await compareOne(choice.single, options, cwd);
    return 'result' in outcome ? { exitCode: outcome.result.gate.passed ? 0 : 1, stdout: RENDERERS[format](outcome.result), stderr: '' } : outcome.failure;
  }

  // Every version: a file as the base would be compared with each of them; only a git ref means the same for all.
  if (values.base !== undefined && existsSync(path.resolve(cwd, values.base))) {
    return {
      exitCode: 2,
      stdout: '',
      stderr: `api:diff: --base ${values.base} is a file, and the contract has ${choice.every.length} versions: name the document to compare with it (--spec <file> or --version vN)\n`,
    };
  }
  const outcomes: Array<{ document: ChosenDocument; outcome: Awaited<ReturnType<typeof compareOne>> }> = [];
  for (const document of choice.every) outcomes.push({ document, outcome: await compareOne(document, options, cwd) });
  const exitCode = worst(outcomes.map(({ outcome }) => ('result' in outcome ? (outcome.result.gate.passed ? 0 : 1) : outcome.failure.exitCode)));
  const stderr = outcomes
    .map(({ document, outcome }) => ('failure' in outcome ? outcome.failure.stderr.replace(/^api:diff: /, `api:diff: ${document.version}: `) : ''))
    .join('');
  if (format === 'json') {
    const versions = Object.fromEntries(
      outcomes.map(({ document, outcome }) => [
        document.version,
        'result' in outcome
          ? { document: displayPath(cwd, document.specPath), ...outcome.result, passed: outcome.result.gate.passed }
          : { document: displayPath(cwd, document.specPath), error: outcome.failure.stderr.trim() },
      ]),
    );
    return { exitCode, stdout: `${JSON.stringify({ passed: exitCode === 0, versions }, null, 2)}\n`, stderr };
  }
  const header = (document: ChosenDocument): string =>
    format === 'markdown'
      ? `## ${document.version} (\`${displayPath(cwd, document.specPath)}\`)\n\n`
      : `=== ${document.version}: ${displayPath(cwd, document.specPath)} ===\n`;
  const sections = outcomes.map(
    ({ document, outcome }) => header(document) + ('result' in outcome ? RENDERERS[format](outcome.result) : 'not compared: see the error on stderr\n'),
  );
  return { exitCode, stdout: sections.join('\n'), stderr };
}

/** One document against its base: the comparison, or the failure to read one side (exit 2). */
async function compareOne(
  document: ChosenDocument,
  options: { base: string | undefined; ownRules: boolean; today: string },
  cwd: string,
): Promise<{ result: ComparisonResult } | { failure: CommandOutcome }> {
  try {
    const head = await loadContractFile(document.specPath, displayPath(cwd, document.specPath));
    const base = await loadBase(options.base, document.specPath, cwd);
    return { result: compareContracts(base, head, { ownRules: options.ownRules, today: options.today }) };
  } catch (error) {
    if (error instanceof ContractSourceError) return { failure: { exitCode: 2, stdout: '', stderr: `api:diff: ${error.message}\n` } };
    throw error;
  }
}
