/**
 * `npm run api:changelog`: writes CHANGELOG.md next to the contract from its
 * releases folder; with `--check`, only says whether the committed file is
 * what the release record gives (exit 1 when not), for CI. With neither
 * `--spec` nor `--version`, every major version's (`openapi/vN/CHANGELOG.md`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { planChangelog, type ChangelogPlan } from './changelog';
import type { CommandOutcome } from './command-io';
import { chooseDocuments, type ChoiceFlags } from './contract-choice';
import { ContractSourceError, displayPath } from './load-contract';
import { releasesDirOf } from './releases';

export const API_CHANGELOG_USAGE = 'usage: npm run api:changelog -- [--version vN | --spec <file>] [--check]';

/** The 1-based number of the first line where two texts differ. */
function firstDifferentLine(a: string, b: string): number {
  const left = a.split('\n');
  const right = b.split('\n');
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? left.length : index) + 1;
}

/**
 * Runs `api:changelog` in-process. `root` is the project whose versions are
 * checked when no document is named.
 *
 * @example
 * await runApiChangelog([], process.cwd());                          // writes openapi/vN/CHANGELOG.md of every version
 * await runApiChangelog(['--check'], process.cwd());                 // exit 1 when any of them is stale
 * await runApiChangelog(['--check', '--version', 'v2'], process.cwd()); // openapi/v2/CHANGELOG.md only
 */
export async function runApiChangelog(args: readonly string[], cwd: string, root: string = cwd): Promise<CommandOutcome> {
  let values: ChoiceFlags & { check: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { spec: { type: 'string' }, version: { type: 'string' }, check: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { exitCode: 2, stdout: '', stderr: `api:changelog: ${(error as Error).message}\n${API_CHANGELOG_USAGE}\n` };
  }
  const choice = chooseDocuments(values, cwd, root);
  if ('error' in choice) return { exitCode: 2, stdout: '', stderr: `api:changelog: ${choice.error}\n${API_CHANGELOG_USAGE}\n` };
  const outcomes: CommandOutcome[] = [];
  for (const document of 'single' in choice ? [choice.single] : choice.every) outcomes.push(await changelogOf(document.specPath, values.check, cwd));
  const codes = outcomes.map((outcome) => outcome.exitCode);
  return {
    exitCode: codes.includes(2) ? 2 : codes.includes(1) ? 1 : 0,
    stdout: outcomes.map((outcome) => outcome.stdout).join(''),
    stderr: outcomes.map((outcome) => outcome.stderr).join(''),
  };
}

/** The changelog of one document: checked, or written. */
async function changelogOf(specPath: string, check: boolean, cwd: string): Promise<CommandOutcome> {
  let plan: ChangelogPlan;
  try {
    plan = await planChangelog(specPath, releasesDirOf(specPath), cwd);
  } catch (error) {
    if (error instanceof ContractSourceError) return { exitCode: 2, stdout: '', stderr: `api:changelog: ${error.message}\n` };
    throw error;
  }
  const shown = displayPath(cwd, plan.file);
  const current = existsSync(plan.file) ? readFileSync(plan.file, 'utf8') : undefined;
  if (check) {
    if (current === plan.text)
      return { exitCode: 0, stdout: `${shown} is up to date (${plan.releases} release${plan.releases === 1 ? '' : 's'}).\n`, stderr: '' };
    const why = current === undefined ? 'is missing' : `is stale (first difference at line ${firstDifferentLine(current, plan.text)})`;
    return { exitCode: 1, stdout: '', stderr: `api:changelog: ${shown} ${why}: run npm run api:changelog and commit it\n` };
  }
  if (current === plan.text) return { exitCode: 0, stdout: `${shown} is up to date.\n`, stderr: '' };
  writeFileSync(plan.file, plan.text);
  return { exitCode: 0, stdout: `Wrote ${shown} (${plan.releases} release${plan.releases === 1 ? '' : 's'}). Commit it: git add ${shown}\n`, stderr: '' };
}
