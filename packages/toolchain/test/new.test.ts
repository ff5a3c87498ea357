/**
 * `spec-first new` refuses by name what it cannot make a project of, and
 * leaves nothing behind when it does; the toolchain's door. The projects it
 * makes are installed and driven over HTTP by the repository's e2e suite
 * (test/new-project.test.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProject } from '../src';
import { DEV_DEPENDENCIES } from '../src/new/project-files';

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

  test('usage', async () => {
    expect(await createProject([], work)).toBe(2);
    expect(said.join('\n')).toMatch(/usage: npm run new -- <document/);
  });
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
    for (const [name, version] of Object.entries(DEV_DEPENDENCIES)) expect([name, root.devDependencies[name]]).toEqual([name, version]);
  });

  test('the template names nothing of the store', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
    const mentions = files(path.join(PACKAGE_ROOT, 'template')).filter((file) => /\bpets?\b|adoption|src\/service/i.test(readFileSync(file, 'utf8')));
    expect(mentions).toEqual([]);
  });
});
