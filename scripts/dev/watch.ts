/**
 * File watching for `npm run dev`: Node's own `fs.watch`, event-driven
 * (inotify on Linux, FSEvents/kqueue on macOS, ReadDirectoryChangesW on
 * Windows), never polling, no dependency: one watcher per folder of the
 * watched trees, as chokidar does it, and as TypeScript's own watch does
 * beside it.
 *
 * Not `fs.watch(folder, { recursive: true })`: on Linux (Node 24) that mode
 * loses a file once an atomic save replaces it (`sed -i`, editors' "safe
 * write": write a temporary file, rename it over the original); a folder's
 * watcher sees every name that appears, changes or goes in it, whichever way.
 * A new folder is watched as soon as it appears (and what it already holds
 * is looked at); a removed one is dropped.
 *
 * Events are noisy (a save is often several: truncate, write, rename; a
 * `touch` changes nothing), so a file counts as changed only when its
 * contents differ from the last ones seen (a hash per file), and the dev
 * loop's own writes (scaffolded stubs, the registry) are recorded with
 * `remember` so they do not come back as changes.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { isEditorNoise } from './contract-documents';

const digest = (contents: Buffer): string => createHash('sha1').update(contents).digest('hex');

/** Contents hash of a file; undefined when it does not exist (or is a folder). */
function hashOf(file: string): string | undefined {
  try {
    return digest(readFileSync(file));
  } catch {
    return undefined;
  }
}

const isFolder = (entry: string): boolean => {
  try {
    return statSync(entry).isDirectory();
  } catch {
    return false;
  }
};

export type ChangeKind = 'created' | 'changed' | 'deleted';

export class ContentWatcher {
  private readonly hashes = new Map<string, string | undefined>();
  /** Absolute folder -> its watcher. */
  private readonly folderWatchers = new Map<string, FSWatcher>();
  private closed = false;

  /**
   * @param root the project
   * @param folders folders to watch, with everything under them, relative to `root`
   * @param onChange called with the file (relative, forward slashes) whose contents changed, was created or deleted
   */
  constructor(
    private readonly root: string,
    private readonly folders: readonly string[],
    private readonly onChange: (file: string, kind: ChangeKind) => void,
  ) {}

  start(): void {
    for (const folder of this.folders) this.watchTree(path.join(this.root, folder), false);
  }

  /** Watches `folder` and the folders under it; with `report`, the files found there are changes (a folder that just appeared). */
  private watchTree(folder: string, report: boolean): void {
    if (this.closed || this.folderWatchers.has(folder)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(folder, (_event, name) => {
        if (name) this.consider(path.join(folder, name.toString()));
      });
    } catch {
      return; // gone already
    }
    watcher.on('error', () => this.unwatchTree(folder));
    this.folderWatchers.set(folder, watcher);
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = path.join(folder, entry.name);
      if (entry.isDirectory()) this.watchTree(child, report);
      else if (entry.isFile()) {
        if (report) this.consider(child);
        else this.hashes.set(this.relative(child), hashOf(child)); // the contents now, so a first event can be told from a touch
      }
    }
  }

  /** Drops the watchers of `folder` and under it; its known files are changes (deleted). */
  private unwatchTree(folder: string): void {
    for (const [watched, watcher] of this.folderWatchers) {
      if (watched === folder || watched.startsWith(`${folder}${path.sep}`)) {
        watcher.close();
        this.folderWatchers.delete(watched);
      }
    }
    const prefix = `${this.relative(folder)}/`;
    for (const file of [...this.hashes.keys()]) if (file.startsWith(prefix)) this.consider(path.join(this.root, file));
  }

  private relative(file: string): string {
    return path.relative(this.root, file).split(path.sep).join('/');
  }

  /** Something happened to `entry`: a folder appeared or went, or a file may have changed. */
  private consider(entry: string): void {
    if (this.closed) return;
    if (isFolder(entry)) {
      this.watchTree(entry, true);
      return;
    }
    if (this.folderWatchers.has(entry)) {
      this.unwatchTree(entry);
      return;
    }
    const relative = this.relative(entry);
    if (isEditorNoise(relative)) return;
    const hash = hashOf(entry);
    const known = this.hashes.has(relative);
    if (known && this.hashes.get(relative) === hash) return;
    if (!known && hash === undefined) return; // created and deleted at once
    if (hash === undefined) this.hashes.delete(relative);
    else this.hashes.set(relative, hash);
    this.onChange(relative, hash === undefined ? 'deleted' : known ? 'changed' : 'created');
  }

  /** Records a file the dev loop wrote itself, so its event is not a change. */
  remember(relative: string): void {
    this.hashes.set(relative, hashOf(path.join(this.root, relative)));
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.folderWatchers.values()) watcher.close();
    this.folderWatchers.clear();
  }
}
