/**
 * Refuses to run on a Node.js older than package.json's `engines.node`, with
 * one line instead of a crash: better-sqlite3 13 (the embedded database)
 * segfaults at its first query on Node 20. Every entry point imports this
 * module first (`import './check-runtime'`), before anything native loads.
 *
 * `npm start`, `npm test` and the other npm scripts already run on the Node
 * pinned in devDependencies (node_modules/.bin/node comes first on their
 * PATH); this guards `node dist/src/server.js` run by hand or by a supervisor.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** `>=22.12.0` → [22, 12, 0]; the only form of `engines.node` this project uses. */
export function minimumVersion(range: string): [number, number, number] {
  const match = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
  if (!match) throw new Error(`engines.node must be ">=MAJOR.MINOR.PATCH", not "${range}"`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/**
 * The one-line complaint when `version` is below `range`, else undefined.
 *
 * @example unsupportedRuntime('20.20.2', '>=22.12.0') // 'pet-adoption-api needs Node.js >=22.12.0 ...'
 */
export function unsupportedRuntime(version: string, range: string): string | undefined {
  const minimum = minimumVersion(range);
  const actual = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if ((actual[i] ?? 0) > minimum[i]!) return undefined;
    if ((actual[i] ?? 0) < minimum[i]!) {
      return (
        `pet-adoption-api needs Node.js ${range} (package.json "engines"), but this is Node.js v${actual.join('.')} ` +
        `(${process.execPath}): run it through npm (npm start uses the Node pinned in node_modules/.bin) or install Node 24 LTS.`
      );
    }
  }
  return undefined;
}

/** package.json's `engines.node`, found from here in src/ (tsx) and in dist/src/ (built) alike. */
export function enginesRange(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; engines?: { node?: string } };
      if (manifest.name === 'pet-adoption-api' && manifest.engines?.node) return manifest.engines.node;
    }
    if (path.dirname(dir) === dir) throw new Error('package.json of pet-adoption-api not found');
  }
}

const problem = unsupportedRuntime(process.versions.node, enginesRange());
if (problem) {
  console.error(problem);
  process.exit(1);
}
