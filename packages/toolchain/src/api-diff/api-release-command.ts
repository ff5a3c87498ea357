/**
 * `npm run api:release`: records the working contract as released, as
 * `openapi/v1/releases/<info.version>.yaml` (a byte-for-byte copy, to commit),
 * its date in `openapi/v1/releases/index.json`, and regenerates
 * `openapi/v1/CHANGELOG.md` so that it never lags the record.
 * Refuses to overwrite a recorded version, to go back in version, and to
 * record a breaking change against the last release that is not announced
 * (by a major bump, or by a sunset date that has come). Each major version
 * (`openapi/vN/openapi.yaml`) has its own record: when there are several,
 * `--version vN` (or `--spec <file>`) says which one is released.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import semver from 'semver';
import { planChangelog } from './changelog';
import { compareContracts } from './compare-contracts';
import type { CommandOutcome } from './command-io';
import { chooseDocuments, whichVersionMessage, type ChoiceFlags } from './contract-choice';
import { stringify } from 'yaml';
import { ContractSourceError, displayPath, hasExternalRefs, loadContractFile } from './load-contract';
import { RELEASE_INDEX, recordReleaseDate } from './release-dates';
import { newestRelease, releasesDirOf } from './releases';
import { renderText } from './report';
import { resolveToday } from './today';

const USAGE = 'usage: npm run api:release -- [--version vN | --spec <file>] [--today YYYY-MM-DD]';
const refuse = (message: string, details = ''): CommandOutcome => ({ exitCode: 1, stdout: details, stderr: `api:release: ${message}\n` });
const badInput = (message: string): CommandOutcome => ({ exitCode: 2, stdout: '', stderr: `api:release: ${message}\n` });

/**
 * Runs `api:release` in-process. `--today` (default `$API_DIFF_TODAY`, else
 * the real date, UTC) is the release date recorded and the day sunsets are
 * judged by. `root` is the project whose versions `--version` names.
 *
 * @example
 * await runApiRelease(['--version', 'v1'], process.cwd()); // writes openapi/v1/releases/1.2.0.yaml when info.version is 1.2.0, its date, and openapi/v1/CHANGELOG.md
 * await runApiRelease([], process.cwd()); // exit 2 when there are several versions: it says to pass --version vN
 */
export async function runApiRelease(args: readonly string[], cwd: string, root: string = cwd): Promise<CommandOutcome> {
  let values: ChoiceFlags & { today?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { spec: { type: 'string' }, version: { type: 'string' }, today: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return badInput(`${(error as Error).message}\n${USAGE}`);
  }
  const day = resolveToday(values.today);
  if ('error' in day) return badInput(day.error);
  const choice = chooseDocuments(values, cwd, root);
  if ('error' in choice) return badInput(`${choice.error}\n${USAGE}`);
  if ('every' in choice && choice.every.length > 1) return badInput(`${whichVersionMessage('api:release', choice.every, cwd)}\n${USAGE}`);
  const specPath = 'single' in choice ? choice.single.specPath : choice.every[0]!.specPath;
  const relative = (file: string): string => displayPath(cwd, file);
  try {
    const head = await loadContractFile(specPath, relative(specPath));
    const version = head.document.info.version;
    if (semver.valid(version) !== version) return badInput(`info.version ${JSON.stringify(version)} is not a semver version (MAJOR.MINOR.PATCH)`);

    const dir = releasesDirOf(specPath);
    const target = path.join(dir, `${version}.yaml`);
    if (existsSync(target)) return refuse(`${version} is already released (${relative(target)}); raise info.version first`);

    const last = newestRelease(dir);
    if (last) {
      if (semver.lte(version, last.version)) return refuse(`info.version ${version} is not above the last release ${last.version}`);
      const result = compareContracts(await loadContractFile(last.file, relative(last.file)), head, { today: day.today });
      if (!result.gate.passed) return refuse(`${result.gate.summary}`, renderText(result));
    }

    // Everything is read and rendered before anything is written.
    const changelog = await planChangelog(specPath, dir, cwd, { version, date: day.today, contract: { label: relative(target), document: head.document } });
    // A release is one self-contained file: a document split across files is recorded bundled.
    const source = readFileSync(specPath, 'utf8');
    const snapshot = hasExternalRefs(source) ? stringify(head.document) : undefined;
    mkdirSync(dir, { recursive: true });
    if (snapshot === undefined) copyFileSync(specPath, target);
    else writeFileSync(target, snapshot);
    recordReleaseDate(dir, version, day.today);
    writeFileSync(changelog.file, changelog.text);
    const written = [target, path.join(dir, RELEASE_INDEX), changelog.file].map(relative);
    return {
      exitCode: 0,
      stdout:
        `Released ${version} on ${day.today}: ${relative(target)}${last ? ` (last release ${last.version})` : ' (first release)'}; ` +
        `its date in ${written[1]}, and ${written[2]} regenerated.\nCommit them: git add ${written.join(' ')}\n`,
      stderr: '',
    };
  } catch (error) {
    if (error instanceof ContractSourceError) return badInput(error.message);
    throw error;
  }
}
