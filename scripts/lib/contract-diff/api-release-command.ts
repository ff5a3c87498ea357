/**
 * `npm run api:release`: records the working contract as released, as
 * `openapi/releases/<info.version>.yaml` (a byte-for-byte copy, to commit).
 * Refuses to overwrite a recorded version, to go back in version, and to
 * record a breaking change against the last release that is not announced
 * (by a major bump, or by a sunset date that has come).
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import semver from 'semver';
import { SPEC_PATH } from '../../../src/contract/load-spec';
import { compareContracts } from './compare-contracts';
import type { CommandOutcome } from './command-io';
import { ContractSourceError, displayPath, loadContractFile } from './load-contract';
import { newestRelease, releasesDirOf } from './releases';
import { renderText } from './report';
import { resolveToday } from './today';

const refuse = (message: string, details = ''): CommandOutcome => ({ exitCode: 1, stdout: details, stderr: `api:release: ${message}\n` });

/**
 * Runs `api:release` in-process. `--today` (default `$API_DIFF_TODAY`, else
 * the real date, UTC) is the day sunsets are judged by.
 *
 * @example
 * runApiRelease([], process.cwd()); // writes openapi/releases/1.1.0.yaml when info.version is 1.1.0
 */
export function runApiRelease(args: readonly string[], cwd: string): CommandOutcome {
  let values;
  try {
    ({ values } = parseArgs({ args: [...args], options: { spec: { type: 'string' }, today: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    return { exitCode: 2, stdout: '', stderr: `api:release: ${(error as Error).message}\nusage: npm run api:release [-- --spec <file>] [--today YYYY-MM-DD]\n` };
  }
  const day = resolveToday(values.today);
  if ('error' in day) return { exitCode: 2, stdout: '', stderr: `api:release: ${day.error}\n` };
  const specPath = values.spec === undefined ? SPEC_PATH : path.resolve(cwd, values.spec);
  const relative = (file: string): string => displayPath(cwd, file);
  let head;
  try {
    head = loadContractFile(specPath, relative(specPath));
  } catch (error) {
    if (error instanceof ContractSourceError) return { exitCode: 2, stdout: '', stderr: `api:release: ${error.message}\n` };
    throw error;
  }
  const version = head.document.info.version;
  if (semver.valid(version) !== version) return { exitCode: 2, stdout: '', stderr: `api:release: info.version ${JSON.stringify(version)} is not a semver version (MAJOR.MINOR.PATCH)\n` };

  const dir = releasesDirOf(specPath);
  const target = path.join(dir, `${version}.yaml`);
  if (existsSync(target)) return refuse(`${version} is already released (${relative(target)}); raise info.version first`);

  const last = newestRelease(dir);
  if (last) {
    if (semver.lte(version, last.version)) return refuse(`info.version ${version} is not above the last release ${last.version}`);
    const result = compareContracts(loadContractFile(last.file, relative(last.file)), head, { today: day.today });
    if (!result.gate.passed) return refuse(`${result.gate.summary}`, renderText(result));
  }

  mkdirSync(dir, { recursive: true });
  copyFileSync(specPath, target);
  return {
    exitCode: 0,
    stdout: `Released ${version}: ${relative(target)}${last ? ` (last release ${last.version})` : ' (first release)'}.\nCommit it: git add ${relative(target)}\n`,
    stderr: '',
  };
}
