import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, tempDir } from './paths';

/**
 * A throw-away copy of the project: its files (tracked, and new ones not
 * ignored by git) with `node_modules` symlinked, so the real npm scripts run
 * on it without touching this checkout. In `root` (a fresh folder of this
 * test run by default; the benchmarks pass their own).
 *
 * @example const root = copyProject(); runNpm(root, 'generate');
 */
export function copyProject(root: string = path.join(tempDir(), 'project')): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '');
  for (const file of files) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    try {
      copyFileSync(path.join(PROJECT_ROOT, file), path.join(root, file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // deleted but not yet committed
    }
  }
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return root;
}

/** Runs `npm run <script>` in `root`; status and everything it printed. */
export function runNpm(root: string, script: string): { status: number | null; output: string } {
  const result = spawnSync('npm', ['run', '--silent', script], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
