/**
 * The package's surface, as a user meets it: the exports map, and what its
 * one entry exports, read by the TypeScript compiler from src/index.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const PACKAGE_ROOT = path.resolve(__dirname, '..');
const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
};

/** Every name an entry exports, with the JSDoc tags of the declaration it leads to. */
function exportsOf(entry: string): Map<string, string[]> {
  const file = path.join(PACKAGE_ROOT, entry);
  const program = ts.createProgram([file], { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const tags = (target.declarations ?? []).flatMap((declaration) => ts.getJSDocTags(declaration).map((tag) => tag.tagName.text));
      return [symbol.name, tags];
    }),
  );
}

describe('the door (src/index.ts)', () => {
  const door = exportsOf('src/index.ts');

  it('is a handful of names: at most 25', () => {
    expect(door.size).toBeGreaterThan(0);
    expect(door.size).toBeLessThanOrEqual(25);
  });

  it('shows how each name is used: an @example on every one', () => {
    expect([...door].filter(([, tags]) => !tags.includes('example')).map(([name]) => name)).toEqual([]);
  });

  it('is the one entry of the exports map, beside the testing helpers', () => {
    expect(Object.keys(manifest.exports)).toEqual(['.', './testing']);
    expect(manifest.name).not.toMatch(/pet/i);
  });

  it('imports nothing from outside the package but its declared dependencies and Node', () => {
    const sources = ts.sys.readDirectory(path.join(PACKAGE_ROOT, 'src'), ['.ts']);
    const outside = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'|\brequire\('([^']+)'\)|\bimport\('([^']+)'\)/gm)]
        .map((match) => (match[1] ?? match[2] ?? match[3])!)
        .filter((specifier) => {
          if (specifier.startsWith('.')) return !path.resolve(path.dirname(file), specifier).startsWith(path.join(PACKAGE_ROOT, 'src'));
          if (specifier.startsWith('node:')) return false;
          const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
          return !(name in manifest.dependencies) && !(`@types/${name}` in manifest.dependencies) && name !== 'express-serve-static-core';
        })
        .map((specifier) => `${path.relative(PACKAGE_ROOT, file)}: ${specifier}`),
    );
    expect(outside).toEqual([]);
  });
});
