import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './support/paths';

/**
 * The layout the docs promise (docs/architecture.md): the engine package
 * imports nothing of the store, the store reaches it by its package name
 * only, and the store's imports point one way, between files and between
 * folders (each folder of src/service, each other folder of src/, each file
 * at the root of src/). Read from the sources' import statements, type-only
 * imports included.
 */
const SRC = path.join(PROJECT_ROOT, 'src');
const ENGINE = path.join(PROJECT_ROOT, 'packages', 'engine', 'src');
const TOOLCHAIN = path.join(PROJECT_ROOT, 'packages', 'toolchain', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import of a file, resolved to a .ts file of the repository. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].flatMap((match) => {
    const target = path.resolve(path.dirname(file), match[1] ?? match[2]!);
    const resolved = [`${target}.ts`, path.join(target, 'index.ts'), target].find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
    return resolved ? [resolved] : [];
  });
}

/** The unit a file belongs to: src/service/X (a folder, or a file at its root), src/X for other folders, or the file itself at the root of src/. */
function unitOf(file: string): string {
  const parts = path.relative(PROJECT_ROOT, file).split(path.sep);
  if (parts[0] !== 'src') return parts.join('/');
  if (parts[1] === 'service') return parts.slice(0, 3).join('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts.join('/');
}

/** The strongly connected components with more than one member (Tarjan): each is a cycle. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

const files = sources(SRC);
const fileEdges = new Map(files.map((file) => [file, new Set(importsOf(file))]));
const relative = (file: string): string => path.relative(PROJECT_ROOT, file).split(path.sep).join('/');

describe('the layout of src/', () => {
  it.each([
    ['engine', ENGINE, 50],
    ['toolchain', TOOLCHAIN, 30],
  ])('the %s package imports nothing outside its own sources (the engine, for the toolchain, by its package name)', (_name, root, atLeast) => {
    const files = sources(root);
    const crossings = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith(`${root}${path.sep}`))
        .map((target) => `${relative(file)} -> ${relative(target)}`),
    );
    expect(files.length).toBeGreaterThan(atLeast);
    expect(crossings).toEqual([]);
  });

  it('no import cycle between files', () => {
    expect(cycles(fileEdges).map((cycle) => cycle.map(relative))).toEqual([]);
  });

  it('no import cycle between folders', () => {
    const unitEdges = new Map<string, Set<string>>();
    for (const [file, targets] of fileEdges) {
      const from = unitOf(file);
      if (!unitEdges.has(from)) unitEdges.set(from, new Set());
      for (const target of targets) if (unitOf(target) !== from) unitEdges.get(from)!.add(unitOf(target));
    }
    expect(cycles(unitEdges)).toEqual([]);
  });

  it('the store reaches the engine by its package name only, never by a path into packages/', () => {
    const store = [...sources(SRC), ...['scripts', 'test', 'bench'].flatMap((dir) => sources(path.join(PROJECT_ROOT, dir)))].filter(
      (file) => !relative(file).startsWith('test/fixtures/'),
    );
    const intoPackages = store.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/['"]((?:\.\.?\/)+(?:[\w.-]+\/)*packages\/[^'"]*)['"]/g)].map((match) => `${relative(file)} -> ${match[1]}`),
    );
    expect(store.length).toBeGreaterThan(100);
    expect(intoPackages).toEqual([]);
  });

  it('each part of the store has a front door (its index.ts), and code outside the part imports it from there, never a file behind it', () => {
    const parts = [...new Set(files.map(unitOf))].filter((unit) => !unit.endsWith('.ts'));
    expect(parts.filter((part) => !existsSync(path.join(PROJECT_ROOT, part, 'index.ts')))).toEqual([]);
    const outside = [...files, ...['scripts', 'test', 'bench'].flatMap((dir) => sources(path.join(PROJECT_ROOT, dir)))].filter(
      (file) => !relative(file).startsWith('test/fixtures/'),
    );
    const behind = outside.flatMap((file) =>
      importsOf(file)
        .filter((target) => relative(target).startsWith('src/'))
        .filter((target) => {
          const part = unitOf(target);
          if (part.endsWith('.ts') || part === unitOf(file)) return false;
          // The typed clients' entries are published one per version (package.json exports): src/client/vN.ts.
          return !relative(target).endsWith(`${part}/index.ts`) && !/^src\/client\/v\d+\.ts$/.test(relative(target));
        })
        .map((target) => `${relative(file)} -> ${relative(target)}`),
    );
    expect(parts.length).toBeGreaterThan(10);
    expect(behind).toEqual([]);
  });

  it("the composition root tells the store's wiring in under 150 lines", () => {
    expect(readFileSync(path.join(SRC, 'compose.ts'), 'utf8').split('\n').length).toBeLessThan(150);
  });

  it('the checks can fail: a cycle is found', () => {
    expect(
      cycles(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['c'])],
          ['c', new Set(['a'])],
          ['d', new Set(['a'])],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });
});
