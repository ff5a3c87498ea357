/**
 * Reads the two sides of a comparison: the working contract, and the base, from
 * a file, from a git ref (`git show <ref>:openapi/v1/openapi.yaml`), or by default
 * the newest recorded release. Every failure is a ContractSourceError with a
 * one-line message.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../../../src/engine/contract';
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
  const text = readFileSync(file, 'utf8');
  return parseContract(hasExternalRefs(text) ? bundledText(file, label) : text, label);
}

/** Whether a document references other files (`$ref: ./schemas/pet.yaml`): then it is read bundled. */
export const hasExternalRefs = (text: string): boolean => /\$ref['"]?\s*:\s*['"]?(?!#)[^\s'"#]/.test(text);

const REDOCLY = path.join(__dirname, '../../../node_modules/.bin/redocly');

/**
 * A document split across files, as one: Redocly's bundler (the one the
 * engine uses) run on it, so a reference to a missing file names the file.
 * Synchronous like the rest of these commands.
 *
 * @example bundledText('openapi/v3/openapi.yaml', 'openapi/v3/openapi.yaml') // the YAML with external $refs inlined as components
 */
export function bundledText(file: string, label: string): string {
  const out = mkdtempSync(path.join(os.tmpdir(), 'contract-bundle-'));
  try {
    const target = path.join(out, 'bundled.yaml');
    execFileSync(REDOCLY, ['bundle', file, '--output', target, '--lint-config', 'off'], {
      cwd: path.dirname(file),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Redocly leaves the bundle unwritten under NODE_ENV=test.
      env: { ...process.env, NODE_ENV: 'production' },
    });
    return readFileSync(target, 'utf8');
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    const reason = /Can't resolve \$ref[^\n]*|ENOENT[^\n]*/.exec(stderr)?.[0] ?? (firstLine(stderr) || (error as Error).message);
    throw new ContractSourceError(`${label}: cannot bundle its references: ${reason}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
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
  if (!hasExternalRefs(text)) return parseContract(text, `${ref}:${shown}`);
  // Split across files: the whole folder as it was at that ref, bundled there.
  const folder = mkdtempSync(path.join(os.tmpdir(), 'contract-at-ref-'));
  try {
    const archive = execFileSync('git', ['archive', '--format=tar', ref, '.'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', folder], { input: archive, stdio: ['pipe', 'ignore', 'pipe'] });
    return parseContract(bundledText(path.join(folder, path.basename(specPath)), `${ref}:${shown}`), `${ref}:${shown}`);
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
 * loadBase(undefined, 'openapi/v1/openapi.yaml', process.cwd()).label; // 'openapi/v1/releases/1.0.0.yaml'
 * loadBase('HEAD', 'openapi/v1/openapi.yaml', process.cwd()).label;    // 'HEAD:openapi/v1/openapi.yaml'
 */
export function loadBase(base: string | undefined, specPath: string, cwd: string): LoadedContract {
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
