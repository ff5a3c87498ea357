import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { PROJECT_ROOT } from './support/paths';
import { ENVIRONMENT_VARIABLES } from '../src/config';
import { PLAN_LIMITS } from '../src/service/plans';

/**
 * The docs name paths, npm scripts, environment variables and error codes; a
 * rename in the code must fail here, not mislead the next reader. Every
 * document a user or a contributor reads is checked against the tree, the
 * package.json, the configuration schema and the contracts' ErrorCode enum.
 */

const read = (file: string): string => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(path.join(PROJECT_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'bench/README.md',
  'test/README.md',
  'packages/engine/README.md',
];

/**
 * Paths the docs name on purpose although the tree has none: what a reader
 * creates in a walk-through (a third version, a new operation's handler), and
 * what generate writes only for a document that declares webhooks or callbacks.
 */
const WALK_THROUGH = [
  /^openapi\/v3\b/,
  /^generated\/v3\b/,
  /^src\/client\/v3\.ts$/,
  /^src\/service\/handlers\/listShelters\.ts$/,
  /^generated\/vN\/events\.ts$/,
];
/** A path of the repository named in prose: a top-level folder of the tree, then its path. */
const PATH_NAMED = /(?<![\w./-])((?:src|test|bench|scripts|docs|openapi|generated|deploy|packages|\.ci)\/[\w./*{},<>-]*[\w*}>])/g;
/**
 * Paths code comments name on purpose although the tree has none: placeholders
 * (`src/X`, `bench/results/NAME.md`), what a tool writes when it runs (a peer's
 * node_modules, an operation a walk-through adds), the `/docs` and `/health`
 * routes read as a path.
 */
const COMMENT_EXAMPLES = [
  /^src\/(?:engine\/|service\/)?X$/,
  /node_modules$/,
  /^src\/service\/handlers\/adoptPet\.ts$/,
  /^docs\/health$/,
  /^bench\/results\/NAME\./,
];
const VERSIONS = readdirSync(path.join(PROJECT_ROOT, 'openapi')).filter((name) => /^v\d+$/.test(name));

/** Every file of the repository (tracked or new), as paths relative to its root. */
const TREE: readonly string[] = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);

/** A documented path as a pattern: `vN` any version, `<name>` and `*` any name, `{a,b}` either, `**` any folders. */
function pattern(documented: string): RegExp {
  let source = '';
  for (let i = 0; i < documented.length; i++) {
    const rest = documented.slice(i);
    if (rest.startsWith('**/')) {
      source += '(?:[^/]+/)*';
      i += 2;
    } else if (rest.startsWith('vN')) {
      source += `(?:${VERSIONS.join('|')})`;
      i += 1;
    } else if (rest[0] === '<') {
      const end = rest.indexOf('>');
      source += '[^/]+';
      i += end;
    } else if (rest[0] === '{') {
      const end = rest.indexOf('}');
      source += `(?:${rest.slice(1, end).split(',').map(escapeRegExp).join('|')})`;
      i += end;
    } else if (rest[0] === '*') source += '[^/]*';
    else source += escapeRegExp(rest[0]!);
  }
  return new RegExp(`^${source}(?:/.*)?$`);
}
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the docs match the code', () => {
  it.each(DOCS)('%s: every path it names exists', (doc) => {
    const text = read(doc);
    const named = new Set([...text.matchAll(PATH_NAMED)].map((match) => match[1]!));
    // A package's README names its files from its own folder, and a project's documents (openapi/vN/) from the project's.
    const base = doc.startsWith('packages/') ? `${path.dirname(doc)}/` : '';
    const resolved = (documented: string): string => (documented.startsWith('openapi/') ? documented : `${base}${documented}`);
    const missing = [...named].filter(
      (documented) => !WALK_THROUGH.some((example) => example.test(documented)) && !TREE.some((file) => pattern(resolved(documented)).test(file)),
    );
    expect(missing).toEqual([]);
  });

  it.each(DOCS)('%s: every npm script it names is in package.json', (doc) => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    const named = [...read(doc).matchAll(/npm run (?:--silent |-s )?([\w:.-]*\w)/g)].map((match) => match[1]!);
    expect(named.filter((script) => !scripts.includes(script))).toEqual([]);
  });

  it('every environment variable the docs name is read by the code, and docs/operations.md documents every one the server reads', () => {
    const code = TREE.filter(
      (file) =>
        (/^(src|scripts|bench|test|\.ci|deploy)\//.test(file) || file === 'jest.config.ts') &&
        !file.startsWith('test/fixtures/') &&
        /\.(ts|mjs|cjs|js|sh|json|ya?ml)$|\/run$|Dockerfile/.test(file),
    )
      .map((file) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8'))
      .join('\n');
    const named = new Set(DOCS.flatMap((doc) => [...read(doc).matchAll(/(?<![\w.-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w-])/g)].map((match) => match[1]!)));
    expect([...named].filter((variable) => !code.includes(variable))).toEqual([]);
    const operations = read('docs/operations.md');
    expect(ENVIRONMENT_VARIABLES.filter((variable) => !operations.includes(`\`${variable}\``))).toEqual([]);
  });

  it.each(VERSIONS)('docs/architecture.md lists exactly the ErrorCode enum of the newest version, which holds every older one: %s', (version) => {
    const document = parse(read(`openapi/${version}/openapi.yaml`)) as { components: { schemas: { ErrorCode: { enum: string[] } } } };
    const bullet = /- Error codes: ([\s\S]*?)They are the `ErrorCode` enum/.exec(read('docs/architecture.md'))?.[1] ?? '';
    const listed = [...bullet.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!);
    const codes = document.components.schemas.ErrorCode.enum;
    if (version === VERSIONS[VERSIONS.length - 1]) expect([...listed].sort()).toEqual([...codes].sort());
    else expect(codes.filter((code) => !listed.includes(code))).toEqual([]);
  });

  it('no doc or bench result names a path of the machine it was written on (this checkout, the temp dir)', () => {
    const checkout = path.resolve(PROJECT_ROOT);
    const results = readdirSync(path.join(PROJECT_ROOT, 'bench/results')).map((name) => `bench/results/${name}`);
    const named = [...DOCS, ...results].filter((file) => {
      const text = read(file);
      return text.includes(checkout) || /(?<![\w.])\/tmp\/[\w-]/.test(text);
    });
    expect(named).toEqual([]);
  });

  it('every path a code comment names exists (src, scripts, test, bench, and the engine package: from its own folder)', () => {
    const sources = TREE.filter(
      (file) => /^(src|scripts|test|bench|packages\/engine\/(src|test))\//.test(file) && /\.(ts|mjs|cjs)$/.test(file) && !file.startsWith('test/fixtures/'),
    );
    const missing: string[] = [];
    for (const file of sources) {
      const base = file.startsWith('packages/engine/') ? 'packages/engine/' : '';
      const comments = [...read(file).matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((match) => match[0]).join('\n');
      for (const [, named] of comments.matchAll(PATH_NAMED)) {
        if (COMMENT_EXAMPLES.some((example) => example.test(named!)) || WALK_THROUGH.some((example) => example.test(named!))) continue;
        // The package names its own files from its folder, and the layout of a project's documents (openapi/vN/) from the project's.
        const candidates = named!.startsWith('openapi/') ? [named!] : [`${base}${named!}`];
        if (!candidates.some((candidate) => TREE.some((tracked) => pattern(candidate).test(tracked)))) missing.push(`${file}: ${named}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every contract version the docs name was released (openapi/vN/releases/) or is the current one', () => {
    const known = new Set(
      VERSIONS.flatMap((version) => [
        (parse(read(`openapi/${version}/openapi.yaml`)) as { info: { version: string } }).info.version,
        ...readdirSync(path.join(PROJECT_ROOT, `openapi/${version}/releases`))
          .filter((name) => name.endsWith('.yaml'))
          .map((name) => name.replace(/\.yaml$/, '')),
      ]),
    );
    const unknown = DOCS.flatMap((doc) =>
      [...read(doc).matchAll(/\b[Vv]ersion (\d+)\.(\d+)(?:\.(\d+))?\b/g)]
        .filter((match) => !known.has([match[1], match[2], match[3] ?? '0'].join('.')))
        .map((match) => `${doc}: "${match[0]}"`),
    );
    expect(unknown).toEqual([]);
  });

  it("the plans' limits the contracts and docs/using-the-api.md state are plans.ts's", () => {
    const figure = (text: string): number => Number(text.replace(/,/g, ''));
    const stated = (text: string, pattern: RegExp): Record<string, { perMinute: number; perDay: number }> =>
      Object.fromEntries([...text.matchAll(pattern)].map((match) => [match[1]!.toLowerCase(), { perMinute: figure(match[2]!), perDay: figure(match[3]!) }]));
    const expected = { ...PLAN_LIMITS };
    for (const version of VERSIONS) {
      const description = (parse(read(`openapi/${version}/openapi.yaml`)) as { info: { description: string } }).info.description.replace(/\s+/g, ' ');
      expect([version, stated(description, /\b(Free|Pro|Business) ([\d,]+) \/ ([\d,]+)/g)]).toEqual([version, expected]);
    }
    expect(stated(read('docs/using-the-api.md'), /^\| (free|pro|business) \| ([\d,]+) \| ([\d,]+) \|$/gm)).toEqual(expected);
  });

  it('the patterns can fail: a renamed path, script, variable or code is caught', () => {
    expect(TREE.some((file) => pattern('packages/engine/src/pipeline/phases.ts').test(file))).toBe(true);
    expect(TREE.some((file) => pattern('packages/engine/src/pipeline/phase.ts').test(file))).toBe(false);
    expect(TREE.some((file) => pattern('generated/vN/operations.ts').test(file))).toBe(true);
    expect(TREE.some((file) => pattern('bench/results/latest.{json,md}').test(file))).toBe(true);
    expect(TREE.some((file) => pattern('bench/results/nothing.{json,md}').test(file))).toBe(false);
    expect(existsSync(path.join(PROJECT_ROOT, 'docs/operations.md'))).toBe(true);
  });
});
