/**
 * Reads the two sides of a comparison: the working contract, and the base, from
 * a file, from a git ref (`git show <ref>:openapi/v1/openapi.yaml`), or by default
 * the newest recorded release. Every failure is a ContractSourceError with a
 * one-line message.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../../../src/engine/contract/document';
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

/** Parses YAML text and checks that it is an OpenAPI document with a version. */
export function parseContract(text: string, label: string): LoadedContract {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new ContractSourceError(`${label} is not valid YAML: ${firstLine((error as Error).message)}`);
  }
  const candidate = document as Partial<OpenApiDocument> | null;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.openapi !== 'string') {
    throw new ContractSourceError(`${label} is not an OpenAPI document (no "openapi" field)`);
  }
  if (typeof candidate.info?.version !== 'string') throw new ContractSourceError(`${label} has no info.version`);
  if (typeof candidate.paths !== 'object' || candidate.paths === null) throw new ContractSourceError(`${label} has no paths`);
  return { label, document: candidate as OpenApiDocument };
}

/**
 * Reads a contract file.
 *
 * @example
 * loadContractFile('openapi/v1/releases/1.0.0.yaml').document.info.version; // '1.0.0'
 */
export function loadContractFile(file: string, label: string = file): LoadedContract {
  if (!existsSync(file)) throw new ContractSourceError(`${label}: no such file`);
  if (!statSync(file).isFile()) throw new ContractSourceError(`${label}: not a file`);
  return parseContract(readFileSync(file, 'utf8'), label);
}

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

/** The contract at `specPath` as committed in git `ref`. */
function loadContractAtRef(ref: string, specPath: string): LoadedContract {
  const dir = path.dirname(specPath);
  const relative = `./${path.basename(specPath)}`;
  const shown = pathInRepository(specPath);
  let text: string;
  try {
    // `./name` is relative to cwd, so this works in a worktree and from any folder.
    text = execFileSync('git', ['show', `${ref}:${relative}`], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const stderr = firstLine(String((error as { stderr?: unknown }).stderr ?? (error as Error).message));
    throw new ContractSourceError(`--base ${ref}: neither a file nor a git ref that has ${shown} (${stderr || 'git failed'})`);
  }
  return parseContract(text, `${ref}:${shown}`);
}

/**
 * The base of a comparison: `base` as a file when one exists at that path
 * (relative to `cwd`), else as a git ref; when omitted, the newest release
 * recorded next to the contract.
 *
 * @example
 * loadBase(undefined, 'openapi/v1/openapi.yaml', process.cwd()).label; // 'openapi/v1/releases/1.0.0.yaml'
 * loadBase('HEAD', 'openapi/v1/openapi.yaml', process.cwd()).label;    // 'HEAD:openapi/v1/openapi.yaml'
 */
export function loadBase(base: string | undefined, specPath: string, cwd: string): LoadedContract {
  if (base === undefined) {
    const release = newestRelease(releasesDirOf(specPath));
    if (!release) {
      throw new ContractSourceError(`no release recorded in ${displayPath(cwd, releasesDirOf(specPath))} (npm run api:release records one); pass --base <git ref or file>`);
    }
    return loadContractFile(release.file, displayPath(cwd, release.file));
  }
  if (base.trim() === '') throw new ContractSourceError('--base is empty');
  if (base.startsWith('-')) throw new ContractSourceError(`--base ${base}: not a file, and a git ref cannot start with "-"`);
  const asFile = path.resolve(cwd, base);
  if (existsSync(asFile)) return loadContractFile(asFile, base);
  return loadContractAtRef(base, specPath);
}
