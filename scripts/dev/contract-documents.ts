/**
 * Which files are the contract, and the last good copy of them.
 *
 * The contract documents are found, not listed: every `openapi.yaml` under
 * `openapi/`, at any depth: one per major version, `openapi/v1/openapi.yaml`
 * and `openapi/v2/openapi.yaml` today. The release snapshots that
 * `npm run api:release` writes beside them are named by their version, so
 * they are never taken for a document.
 * Any other file under `openapi/` (a fragment a document `$ref`s, the lint
 * rules in `redocly.yaml`) is part of the contract too: a change to it
 * re-checks every document.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const CONTRACT_FOLDER = 'openapi';
const RELEASES = 'releases';
const DOCUMENT_NAME = 'openapi.yaml';

/** Relative path with forward slashes, as printed and matched. */
const posix = (relative: string): string => relative.split(path.sep).join('/');

/** Every file of `folder` (relative to it, sorted), editors' temporary files left out; none when it does not exist. */
function filesUnder(folder: string): string[] {
  try {
    return readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => posix(path.relative(folder, path.join(entry.parentPath, entry.name))))
      .filter((file) => !isEditorNoise(file))
      .sort();
  } catch {
    return [];
  }
}

/** Every file of `openapi/` (relative to the project). */
const contractFolderFiles = (root: string): string[] => filesUnder(path.join(root, CONTRACT_FOLDER)).map((file) => `${CONTRACT_FOLDER}/${file}`);

/** The contract documents (relative paths, sorted): every openapi.yaml under openapi/. */
export function findContractDocuments(root: string): string[] {
  return contractFolderFiles(root).filter((file) => path.posix.basename(file) === DOCUMENT_NAME && !isRelease(file));
}

const isRelease = (file: string): boolean => file.startsWith(`${CONTRACT_FOLDER}/${RELEASES}/`);

/**
 * Whether a change to `file` (relative, under openapi/) concerns the contract
 * being edited: anything under openapi/ but releases and editors' temporary files.
 */
export function isContractChange(file: string): boolean {
  return file.startsWith(`${CONTRACT_FOLDER}/`) && !isRelease(file) && !isEditorNoise(file);
}

/** Swap files, backups, lock files and temporary names editors write beside the real one. */
export function isEditorNoise(file: string): boolean {
  const name = path.posix.basename(file);
  return name.startsWith('.') || name.endsWith('~') || /\.(swp|swx|swo|tmp|bak|orig)$/.test(name) || /^\d+$/.test(name) || name.startsWith('#');
}

/**
 * The contract as it was when it last passed the checks: every file of
 * openapi/ (releases too, so the copy is laid out exactly like the original),
 * kept in memory and written to a folder that the server reads
 * (`OPENAPI_DIR`) whenever it (re)starts. So while a document is broken, a
 * restart for a source edit still serves the last good contract.
 */
export class ContractSnapshot {
  private constructor(
    readonly files: ReadonlyMap<string, Buffer>,
    readonly takenAt: Date,
  ) {}

  /** Reads every file of openapi/ now. */
  static take(root: string): ContractSnapshot {
    const files = new Map<string, Buffer>();
    for (const file of contractFolderFiles(root)) {
      try {
        files.set(file.slice(CONTRACT_FOLDER.length + 1), readFileSync(path.join(root, file)));
      } catch {
        // deleted while reading: the next change event re-checks
      }
    }
    return new ContractSnapshot(files, new Date());
  }

  /** Reads the copy an earlier session wrote, if there is one (its time: when it was written). */
  static readBack(folder: string): ContractSnapshot | undefined {
    const files = new Map(filesUnder(folder).map((file) => [file, readFileSync(path.join(folder, file))] as const));
    const document = [...files.keys()].find((file) => path.posix.basename(file) === DOCUMENT_NAME);
    return document ? new ContractSnapshot(files, statSync(path.join(folder, document)).mtime) : undefined;
  }

  /** Replaces `folder`'s contents with this copy. */
  writeTo(folder: string): void {
    rmSync(folder, { recursive: true, force: true });
    for (const [file, contents] of this.files) {
      mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      writeFileSync(path.join(folder, file), contents);
    }
  }
}
