/**
 * `spec-first new` refuses by name what it cannot make a project of, and
 * leaves nothing behind when it does; the toolchain's door. The projects it
 * makes are installed and driven over HTTP by the repository's e2e suite
 * (test/new-project.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createProject } from '../src';
import { DEV_DEPENDENCIES } from '../src/new/project-files';
import { settingsOf } from '../template/src/settings';

const PACKAGE_ROOT = path.join(__dirname, '..');
let work: string;
let said: string[];

beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'toolchain-new-'));
  said = [];
  jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void said.push(args.join(' ')));
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
});

afterEach(() => {
  jest.restoreAllMocks();
  rmSync(work, { recursive: true, force: true });
});

const write = (name: string, text: string): string => {
  const file = path.join(work, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
};

const OK = `openapi: 3.1.0
info: { title: Notes, version: 2.0.0 }
paths:
  /notes:
    get:
      operationId: listNotes
      responses:
        '200': { description: ok, content: { application/json: { schema: { type: array, items: { type: string } } } } }
`;

describe('spec-first new refuses, by name, with nothing written', () => {
  test.each([
    ['a file that does not exist', () => path.join(work, 'nope.yaml'), /nope\.yaml: no such file/],
    ['a URL', () => 'https://example.com/openapi.yaml', /give a local file/],
    ['a file that is not OpenAPI', () => write('notes.txt', 'just: text\n'), /cannot be read as an OpenAPI document/],
    ['Swagger 2.0', () => write('swagger.yaml', 'swagger: "2.0"\ninfo: { title: x, version: "1" }\npaths: {}\n'), /cannot be read as an OpenAPI document/],
    ['a document without operations', () => write('empty.yaml', 'openapi: 3.1.0\ninfo: { title: x, version: "1" }\npaths: {}\n'), /declares no operation/],
    [
      'a document the engine refuses at start',
      () =>
        write(
          'refused.yaml',
          `openapi: 3.0.3
info: { title: x, version: "1" }
paths:
  /items:
    get:
      operationId: getItem
      security: [{ nowhere: [] }]
      responses: { '200': { description: ok } }
`,
        ),
      /cannot be served: .*getItem/s,
    ],
  ])('%s', async (_what, document, message) => {
    const code = await createProject([document(), path.join(work, 'project')], work);
    expect(said.join('\n')).toMatch(message);
    expect(code).toBe(2);
    expect(readdirSync(work).filter((name) => name.includes('project'))).toEqual([]);
  });

  test('a folder that is not empty', async () => {
    const document = write('notes.yaml', OK);
    write('project/keep.txt', 'mine');
    expect(await createProject([document, 'project'], work)).toBe(2);
    expect(said.join('\n')).toMatch(/project already exists and is not empty/);
    expect(readdirSync(path.join(work, 'project'))).toEqual(['keep.txt']);
  });

  test('a path that is a file, not a folder', async () => {
    const document = write('notes.yaml', OK);
    write('project', 'a file');
    expect(await createProject([document, 'project'], work)).toBe(2);
    expect(said.join('\n')).toMatch(/project exists and is not a folder/);
  });

  test('usage', async () => {
    expect(await createProject([], work)).toBe(2);
    expect(said.join('\n')).toMatch(/usage: npm run new -- <document/);
  });
});

describe('spec-first new writes what it can serve', () => {
  const LONG = `list${'Everything'.repeat(8)}`;

  test('a split document whose reference leaves its folder and comes back is bundled; operation names the handlers folder uses, and long ones, still give a project that compiles and lints', async () => {
    write(
      'spec/api.yaml',
      `openapi: 3.1.0
info: { title: Round trip, version: 1.2.0 }
paths:
  /context:
    get:
      operationId: context
      responses: { '200': { description: ok, content: { application/json: { schema: { $ref: '../spec/schemas/note.yaml' } } } } }
  /v1:
    get:
      operationId: v1
      responses: { '204': { description: none } }
  /long:
    get:
      operationId: ${LONG}
      responses: { '204': { description: none } }
`,
    );
    write('spec/schemas/note.yaml', 'type: object\nproperties: { text: { type: string } }\n');
    // What a run killed an hour ago left behind is removed; a run in progress (a fresh folder) is not.
    const abandoned = write('.project.creating-old/package.json', '{}');
    utimesSync(path.dirname(abandoned), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    write('.project.creating-now/package.json', '{}');
    // As a user runs it, in a process of its own: the generator's openapi-typescript loads ES modules, which this test runner cannot.
    const { INIT_CWD: _typedIn, ...env } = process.env;
    const created = spawnSync(
      process.execPath,
      ['--import', pathToFileURL(require.resolve('tsx')).href, path.join(PACKAGE_ROOT, 'src', 'cli.ts'), 'new', 'spec/api.yaml', 'project'],
      {
        cwd: work,
        env,
        encoding: 'utf8',
      },
    );
    expect([created.status, created.stderr]).toEqual([0, '']);
    expect(readdirSync(work).filter((name) => name.startsWith('.project.creating-'))).toEqual(['.project.creating-now']);
    const project = path.join(work, 'project');
    expect(readdirSync(path.join(project, 'openapi', 'v1')).sort()).toEqual(['CHANGELOG.md', 'openapi.yaml', 'releases']);
    expect(readFileSync(path.join(project, 'openapi', 'v1', 'openapi.yaml'), 'utf8')).toContain('text:');
    const handlers = readdirSync(path.join(project, 'src', 'handlers')).sort();
    expect(handlers).toEqual(['context.ts', 'context_.ts', 'index.ts', `${LONG}.ts`, 'types.ts', 'v1_.ts']);
    expect(readFileSync(path.join(project, 'src', 'handlers', `${LONG}.ts`), 'utf8')).toContain(`notImplementedHandler(\n  '${LONG}',\n);`);
    expect(readFileSync(path.join(project, 'src', 'handlers', 'index.ts'), 'utf8')).toContain('export const v1 = {\n  context_,\n');
    expect(JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')).dependencies['@spec-first/engine']).toMatch(/^file:vendor\//);
    // This repository's packages stand in for the project's own install (the e2e suite installs one for real).
    symlinkSync(path.join(PACKAGE_ROOT, '..', '..', 'node_modules'), path.join(project, 'node_modules'), 'dir');
    for (const [tool, args] of [
      ['tsc', ['-p', 'tsconfig.json']],
      ['biome', ['ci', '.']],
    ] as const) {
      const checked = spawnSync(path.join(project, 'node_modules', '.bin', tool), args, { cwd: project, encoding: 'utf8' });
      expect([tool, checked.status, checked.stdout.slice(-2000)]).toEqual([tool, 0, expect.any(String)]);
    }
  }, 120_000);
});

describe('the toolchain package', () => {
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
    bin: Record<string, string>;
  };

  test('one entry in its exports map, and the spec-first command', () => {
    expect(Object.keys(manifest.exports)).toEqual(['.']);
    expect(manifest.bin).toEqual({ 'spec-first': 'dist/cli.js' });
    expect(manifest.name).not.toMatch(/pet/i);
  });

  test("a new project's development dependencies are the versions this repository builds and tests with", () => {
    const root = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, '..', '..', 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    // `node` aside: `npm run test:node22` runs this suite in a copy that pins Node 22; new projects keep the pin of the repository as committed.
    for (const [name, version] of Object.entries(DEV_DEPENDENCIES)) if (name !== 'node') expect([name, root.devDependencies[name]]).toEqual([name, version]);
    expect(DEV_DEPENDENCIES.node).toMatch(/^24\./);
  });

  test("a new project's server listens on port 3000 of the loopback address unless told otherwise; a bad setting stops the start, named", () => {
    expect(settingsOf({})).toMatchObject({ port: 3000, host: '127.0.0.1', keysFile: 'data/keys.jsonl', mock: false, tokens: {} });
    expect(settingsOf({ PORT: '8080', HOST: '0.0.0.0', MOCK: 'true' })).toMatchObject({ port: 8080, host: '0.0.0.0', mock: true });
    expect(() => settingsOf({ PORT: 'eighty' })).toThrow(/^PORT must be a port number/);
    expect(() => settingsOf({ MOCK: 'yes' })).toThrow(/^MOCK must be true, false or stateful/);
    expect(settingsOf({ MOCK: 'stateful' }).mock).toBe('stateful');
    // `npm run mock -- --stateful` runs the mock script's command with --stateful appended.
    expect(settingsOf({ MOCK: 'true' }, ['--stateful']).mock).toBe('stateful');
    expect(settingsOf({ MOCK: 'true' }, []).mock).toBe(true);
    expect(() => settingsOf({ OAUTH2_JWKS_URL: 'https://issuer.example/jwks.json' })).toThrow(/OAUTH2_ISSUER and OAUTH2_AUDIENCE must both be set/);
  });

  test('the template names nothing of the store', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
    const mentions = files(path.join(PACKAGE_ROOT, 'template')).filter((file) => /\bpets?\b|adoption|src\/service/i.test(readFileSync(file, 'utf8')));
    expect(mentions).toEqual([]);
  });
});
