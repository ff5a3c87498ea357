/**
 * Reads the two sides of a comparison: the working contract, and the base, from
 * a file, from a git ref (the contract's folder as committed there), or by
 * default the newest recorded release. Every document is read by the
 * engine's loader (`loadContract`), the one the server uses, so a document
 * split across files is bundled the same way everywhere. Every failure is a
 * ContractSourceError with a one-line message.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContractLoadError, loadDocument as loadContract, type OpenApiDocument } from '@spec-first/engine/testing';
import { newestRelease, releasesDirOf } from './releases';

export class ContractSourceError extends Error {}

export interface LoadedContract {
  /** How the source is named to the reader: a path, or `<ref>:openapi/v1/openapi.yaml`. */
  label: string;
  document: OpenApiDocument;
}

/** A path as the reader knows it: relative to where they are, absolute when outside it. */
export function displayPath(cwd: string, file: string): string {
  const relative = path.relative(cwd, file);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? '';

/**
 * Reads a contract file (bundled when it references others), named `label` in messages.
 *
 * @example
 * (await loadContractFile('openapi/v1/releases/1.0.0.yaml')).document.info.version; // '1.0.0'
 */
export async function loadContractFile(file: string, label: string = file): Promise<LoadedContract> {
  if (!existsSync(file)) throw new ContractSourceError(`${label}: no such file`);
  if (!statSync(file).isFile()) throw new ContractSourceError(`${label}: not a file`);
  try {
    return { label, document: await loadContract(file) };
  } catch (error) {
    if (!(error instanceof ContractLoadError)) throw error;
    // The loader names the file as it is seen from the working folder; the reader knows it by `label`.
    const shown = path.relative(process.cwd(), path.resolve(file)).split(path.sep).join('/');
    const message = firstLine(error.message);
    if (/Can't resolve \$ref|ENOENT/.test(message)) throw new ContractSourceError(`${label}: cannot bundle its references: ${message}`);
    const reason = [`${shown}: `, `${file}: `].find((prefix) => message.startsWith(prefix));
    throw new ContractSourceError(`${label}: ${reason ? message.slice(reason.length) : message}`);
  }
}

/** Whether a document references other files (`$ref: ./schemas/pet.yaml`): a release of it is recorded bundled. */
export const hasExternalRefs = (text: string): boolean => /\$ref['"]?\s*:\s*['"]?(?!#)[^\s'"#]/.test(text);

/** Where `specPath` is in its git repository (`openapi/v1/openapi.yaml`); outside one, its folder and name. */
function pathInRepository(specPath: string): string {
  const dir = path.dirname(specPath);
  try {
    const prefix = execFileSync('git', ['rev-parse', '--show-prefix'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return `${prefix}${path.basename(specPath)}`;
  } catch {
    return `${path.basename(dir)}/${path.basename(specPath)}`;
  }
}

/** The contract at `specPath` as committed in git `ref`: its folder as it was there, read by the loader. */
async function loadContractAtRef(ref: string, specPath: string): Promise<LoadedContract> {
  const dir = path.dirname(specPath);
  const shown = pathInRepository(specPath);
  const label = `${ref}:${shown}`;
  const folder = mkdtempSync(path.join(os.tmpdir(), 'contract-at-ref-'));
  try {
    let archive: Buffer;
    try {
      // `./name` is relative to cwd, so this works in a worktree and from any folder.
      execFileSync('git', ['cat-file', '-e', `${ref}:./${path.basename(specPath)}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      archive = execFileSync('git', ['archive', '--format=tar', ref, '.'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
    } catch (error) {
      const stderr = firstLine(String((error as { stderr?: unknown }).stderr ?? (error as Error).message));
      throw new ContractSourceError(`--base ${ref}: neither a file nor a git ref that has ${shown} (${stderr || 'git failed'})`);
    }
    execFileSync('tar', ['-x', '-C', folder], { input: archive, stdio: ['pipe', 'ignore', 'pipe'] });
    return await loadContractFile(path.join(folder, path.basename(specPath)), label);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The base of a comparison: `base` as a file when one exists at that path
 * (relative to `cwd`), else as a git ref; when omitted, the newest release
 * recorded next to the contract.
 *
 * @example
 * (await loadBase(undefined, 'openapi/v1/openapi.yaml', process.cwd())).label; // 'openapi/v1/releases/1.0.0.yaml'
 * (await loadBase('HEAD', 'openapi/v1/openapi.yaml', process.cwd())).label;    // 'HEAD:openapi/v1/openapi.yaml'
 */
export async function loadBase(base: string | undefined, specPath: string, cwd: string): Promise<LoadedContract> {
  if (base === undefined) {
    const release = newestRelease(releasesDirOf(specPath));
    if (!release) {
      throw new ContractSourceError(
        `no release recorded in ${displayPath(cwd, releasesDirOf(specPath))} (npm run api:release records one); pass --base <git ref or file>`,
      );
    }
    return loadContractFile(release.file, displayPath(cwd, release.file));
  }
  if (base.trim() === '') throw new ContractSourceError('--base is empty');
  if (base.startsWith('-')) throw new ContractSourceError(`--base ${base}: not a file, and a git ref cannot start with "-"`);
  const asFile = path.resolve(cwd, base);
  if (existsSync(asFile)) return loadContractFile(asFile, base);
  return loadContractAtRef(base, specPath);
}
