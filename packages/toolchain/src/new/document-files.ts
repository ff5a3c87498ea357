import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * Every local file a document is made of: the root, then each file its
 * `$ref`s reach (relative paths, any depth); URLs are left to the bundler.
 *
 * @example documentFiles('api/openapi.yaml') // ['/…/api/openapi.yaml', '/…/api/paths/pets.yaml', '/…/api/schemas/Pet.yaml']
 */
export function documentFiles(root: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    // A reference to a file that is not there is the bundler's to report (or an example's text).
    if (seen.has(file) || !existsSync(file) || !statSync(file).isFile()) return;
    seen.add(file);
    let parsed: unknown;
    try {
      parsed = parse(readFileSync(file, 'utf8'), { maxAliasCount: -1 });
    } catch {
      return;
    }
    for (const ref of refsIn(parsed)) {
      const target = ref.split('#')[0]!;
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      visit(path.resolve(path.dirname(file), decodeURI(target)));
    }
  };
  visit(path.resolve(root));
  return [...seen];
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsIn(value, found);
    }
  }
  return found;
}
