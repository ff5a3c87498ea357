/**
 * File watching for `npm run dev`: Node's own `fs.watch(folder, { recursive:
 * true })`, which is event-driven (inotify on Linux, FSEvents on macOS,
 * ReadDirectoryChangesW on Windows) and needs no dependency; no polling.
 *
 * Events are noisy (an editor's save is often several: truncate, write,
 * rename; a `touch` changes nothing), so a file counts as changed only when
 * its contents differ from the last ones seen (a hash per file), and the
 * dev loop's own writes (generated/, scaffolded stubs) are recorded with
 * `remember` so they do not come back as changes.
 */
import { createHash } from 'node:crypto';
import { watch, readFileSync, readdirSync, type FSWatcher } from 'node:fs';
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

export class ContentWatcher {
  private readonly hashes = new Map<string, string | undefined>();
  private readonly watchers: FSWatcher[] = [];

  /**
   * @param root the project
   * @param folders folders to watch, relative to `root`
   * @param onChange called with the file (relative, forward slashes) whose contents changed, was created or deleted
   */
  constructor(
    private readonly root: string,
    private readonly folders: readonly string[],
    private readonly onChange: (file: string) => void,
  ) {}

  start(): void {
    for (const folder of this.folders) {
      const absolute = path.join(this.root, folder);
      // The contents now, so the first event of a file can be told from a touch.
      for (const entry of readdirSync(absolute, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) {
          const file = path.join(entry.parentPath, entry.name);
          this.hashes.set(this.relative(file), hashOf(file));
        }
      }
      const watcher = watch(absolute, { recursive: true }, (_event, name) => {
        if (name) this.consider(path.join(absolute, name.toString()));
      });
      watcher.on('error', () => {
        // A watched folder deleted (a branch switch): the events of the new one are not seen; restart npm run dev.
      });
      this.watchers.push(watcher);
    }
  }

  private relative(file: string): string {
    return path.relative(this.root, file).split(path.sep).join('/');
  }

  private consider(file: string): void {
    const relative = this.relative(file);
    if (isEditorNoise(relative)) return;
    const hash = hashOf(file);
    const known = this.hashes.has(relative);
    if (known && this.hashes.get(relative) === hash) return;
    if (!known && hash === undefined) return; // a folder, or a file created and deleted at once
    this.hashes.set(relative, hash);
    this.onChange(relative);
  }

  /** Records a file the dev loop wrote itself, so its event is not a change. */
  remember(relative: string): void {
    this.hashes.set(relative, hashOf(path.join(this.root, relative)));
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
  }
}
