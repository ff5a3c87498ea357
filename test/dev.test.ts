/**
 * `npm run dev`, driven as a person would on a copy of the project: over
 * HTTP and by reading what it prints, never restarting it by hand. Add an
 * operation to the contract and see it answer 501 (its stub created, /docs
 * showing it); break the contract three ways and see file, line and rule
 * while the last good contract keeps serving, then fix it; edit a handler
 * and see the new answer (database and keys kept); introduce a type error
 * and see it reported while the server stays up; a second contract document
 * is watched too; Ctrl-C leaves no process behind and frees the port. Then
 * `npm run dev -- --mock`: a new operation answers its example.
 *
 * Everything waits with deadlines (poll until), never fixed sleeps: this
 * machine is small and shared. Whatever happens, every process started in
 * the copy is killed at the end.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { copyProject } from './support/project-copy';
import { devEnv, freePort, pollUntil, portIsFree, processesIn, startDev, type DevSession } from './support/dev-session';

jest.setTimeout(300_000);

let root: string;
let dev: DevSession | undefined;
let key: string;

const specFile = (): string => path.join(root, 'openapi', 'v1', 'openapi.yaml');

/** Saves as many editors do ("safe write"): a temporary file beside it, renamed over it. */
function saveAtomically(file: string, text: string): void {
  writeFileSync(`${file}.saving`, text);
  renameSync(`${file}.saving`, file);
}
/** The contract as these tests edit it: paths added, the rest written back as read. */
interface ContractDocument {
  paths: Record<string, unknown>;
  [member: string]: unknown;
}
const readSpec = (): ContractDocument => parse(readFileSync(specFile(), 'utf8')) as ContractDocument;
const writeSpec = (document: unknown): void => writeFileSync(specFile(), stringify(document));

const shelters = {
  get: {
    operationId: 'listShelters',
    summary: 'List shelters',
    description: 'The shelters that take part.',
    tags: ['pets'],
    responses: {
      '200': {
        description: 'Shelters.',
        content: {
          'application/json': {
            schema: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' } } } },
            example: [{ name: 'Happy Paws' }],
          },
        },
      },
      '401': { $ref: '#/components/responses/Unauthorized' },
      default: { $ref: '#/components/responses/Error' },
    },
  },
};

function api(pathname: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${dev!.url}${pathname}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
}

/** Polls `pathname` until it answers `status` (and `body`, when given); returns the body. */
function answers(pathname: string, status: number, body?: (value: unknown) => boolean, timeoutMs = 90_000): Promise<unknown> {
  let last = '';
  return pollUntil(
    `GET ${pathname} answering ${status}`,
    async () => {
      const res = await api(pathname);
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 300)}`;
      const value = text ? (JSON.parse(text) as unknown) : undefined;
      return res.status === status && (!body || body(value)) ? (value ?? null) : undefined;
    },
    { timeoutMs, intervalMs: 150, describe: () => `last answer: ${last}\nthe lines of npm run dev:\n${dev?.devLines()}` },
  );
}

/** Kills whatever is left in the copy: the test started all of it. */
function killLeftovers(): void {
  dev?.kill();
  for (const { pid } of processesIn(root)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Ctrl-C, then: npm exited, nothing of the copy runs any more, the port is free. */
async function interruptAndCheck(session: DevSession): Promise<void> {
  const ended = await session.interrupt();
  expect(session.output()).toMatch(/DEV: SIGINT: stopping the server, the type checker and the watchers/);
  expect(session.output()).toMatch(/DEV: stopped/);
  // npm itself got the SIGINT too: it ends by it once its script (which exits 0) has ended.
  expect([
    { code: 0, signal: null },
    { code: null, signal: 'SIGINT' },
  ]).toContainEqual(ended);
  const left = await pollUntil('no process left in the copy', async () => (processesIn(root).length === 0 ? [] : undefined), {
    timeoutMs: 15_000,
    describe: () => JSON.stringify(processesIn(root)),
  }).catch(() => processesIn(root));
  expect(left).toEqual([]);
  expect(await portIsFree(session.port)).toBe(true);
}

beforeAll(async () => {
  root = copyProject();
  dev = await startDev(root, { port: await freePort() });
  // An enterprise key, so polling never meets the free plan's 60 requests a minute (the keys CLI works beside the server).
  key = execFileSync('npm', ['run', '--silent', 'keys', '--', 'create', '--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'], {
    cwd: root,
    // The copy's embedded database, as npm run dev uses it (never the suite's PostgreSQL).
    env: devEnv(),
    encoding: 'utf8',
  }).trim();
});

afterAll(() => {
  killLeftovers();
  rmSync(path.join(root, 'data'), { recursive: true, force: true });
});

describe('npm run dev', () => {
  it('serves at once on the embedded database, with no tsc build, and creates the first key as npm start does', async () => {
    const output = dev!.output();
    const firstKey = /No API keys existed, so one was created[\s\S]*?(pas_[A-Za-z0-9_-]{43})/.exec(output)?.[1];
    expect(firstKey).toBeDefined();
    expect(output).toMatch(/DEV: ready in [\d.]+ m?s: http:\/\/127\.0\.0\.1:\d+ .*watching openapi\/v1\/openapi\.yaml, openapi\/v2\/openapi\.yaml and src\//);
    expect(output).toMatch(/INFO: listening on/); // the server's own log, pretty
    expect(existsSync(path.join(root, 'dist', 'src'))).toBe(false);
    expect(existsSync(path.join(root, 'data', 'pets.db'))).toBe(true);
    expect((await fetch(`${dev!.url}/v1/pets`, { headers: { Authorization: `Bearer ${firstKey}` } })).status).toBe(200);
  });

  it('a new operation in the contract answers 501 without restarting anything; its stub is created; /docs shows it', async () => {
    const from = dev!.mark();
    const document = readSpec();
    document['paths']['/shelters'] = shelters;
    writeSpec(document);

    expect(await answers('/v1/shelters', 501)).toEqual({
      code: 'not_implemented',
      message: 'listShelters is declared in the contract but not implemented yet',
      status: 501,
    });
    await dev!.waitFor(
      /DEV: openapi\/v1\/openapi\.yaml changed: checked, no lint problems, regenerated generated\/v1\/openapi\.ts, generated\/v1\/operations\.ts, scaffolded src\/service\/handlers\/listShelters\.ts \([\d.]+ m?s\)/,
      { from },
    );
    await dev!.waitFor(/DEV: the new contract: new listShelters \(answers 501 until implemented\): reloaded in [\d.]+ m?s/, { from });
    expect(readFileSync(path.join(root, 'src/service/handlers/listShelters.ts'), 'utf8')).toContain("notImplementedHandler('listShelters')");
    expect(readFileSync(path.join(root, 'src/service/handlers/index.ts'), 'utf8')).toContain('listShelters,');
    expect(readFileSync(path.join(root, 'generated/v1/operations.ts'), 'utf8')).toContain("listShelters: { method: 'get', path: '/shelters'");
    expect(((await (await fetch(`${dev!.url}/openapi.json`)).json()) as { paths: object }).paths).toHaveProperty(['/shelters']);
    expect(await (await fetch(`${dev!.url}/docs/v1.json`)).text()).toContain('listShelters');
    expect(dev!.child.exitCode).toBeNull();
  });

  describe('a broken contract: file, line and rule; the last good contract keeps serving; the next good save recovers', () => {
    let good: string;
    beforeAll(() => {
      good = readFileSync(specFile(), 'utf8');
    });

    /** Saves `text` (in place, or atomically), waits for the problem line, checks the old contract still serves. */
    async function expectRefused(
      text: string,
      rule: string,
      line: number,
      save = (file: string, data: string): void => writeFileSync(file, data),
    ): Promise<void> {
      const from = dev!.mark();
      save(specFile(), text);
      const [, reportedLine] = await dev!.waitFor(new RegExp(`openapi/v1/openapi\\.yaml:(\\d+):\\d+  error  ${rule}: `), { from });
      expect(Number(reportedLine)).toBe(line);
      await dev!.waitFor(
        /DEV: openapi\/v1\/openapi\.yaml changed: \d+ errors?, not applied; the server keeps the contract of \d\d:\d\d:\d\d; the next good save applies it/,
        { from },
      );
      expect((await api('/v1/shelters')).status).toBe(501);
      expect((await api('/v1/pets')).status).toBe(200);
    }

    const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((line) => line.includes(needle)) + 1;

    it('YAML syntax', async () => {
      const broken = good.replace('summary: List shelters', 'summary: List: shelters');
      expect(broken).not.toBe(good);
      await expectRefused(broken, 'yaml-syntax', lineOf(broken, 'summary: List: shelters'));
    });

    it('a $ref to nothing', async () => {
      const broken = good.replace(/(#\/components\/responses\/)Unauthorized/, '$1Unauthorised');
      expect(broken).not.toBe(good);
      await expectRefused(broken, 'no-unresolved-refs', lineOf(broken, 'Unauthorised'), saveAtomically);
    });

    it('an invalid document, and a source edit meanwhile reloads on the last good contract', async () => {
      const broken = good.replace('summary: List shelters', 'summry: List shelters');
      await expectRefused(broken, 'struct', lineOf(broken, 'summry'));
      const from = dev!.mark();
      const handler = path.join(root, 'src/service/handlers/listShelters.ts');
      writeFileSync(handler, `${readFileSync(handler, 'utf8')}// edited\n`);
      await dev!.waitFor(/DEV: src\/service\/handlers\/listShelters\.ts changed: reloaded in /, { from });
      expect((await api('/v1/shelters')).status).toBe(501);
    });

    it('the good contract saved again is applied by itself', async () => {
      const from = dev!.mark();
      saveAtomically(specFile(), good);
      await dev!.waitFor(/DEV: openapi\/v1\/openapi\.yaml changed: fixed, no lint problems/, { from });
      await dev!.waitFor(/DEV: the new contract: reloaded in /, { from });
      expect((await api('/v1/shelters')).status).toBe(501);
    });
  });

  it('a handler edit is served within seconds, with the same database and keys', async () => {
    const created = await api('/v1/pets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const from = dev!.mark();
    writeFileSync(
      path.join(root, 'src/service/handlers/listShelters.ts'),
      `import type { Handler } from './types';

export const listShelters: Handler<'listShelters'> = async () => ({ status: 200, body: [{ name: 'Happy Paws' }, { name: 'Second Chance' }] });
`,
    );
    expect(await answers('/v1/shelters', 200)).toEqual([{ name: 'Happy Paws' }, { name: 'Second Chance' }]);
    await dev!.waitFor(/DEV: src\/service\/handlers\/listShelters\.ts changed: reloaded in [\d.]+ m?s \(server start [\d.]+ m?s\)/, { from });
    expect((await api(`/v1/pets/${id}`)).status).toBe(200);
  });

  it('a type error is printed with file and line while the server keeps serving; a line says when it is fixed', async () => {
    const handler = path.join(root, 'src/service/handlers/listShelters.ts');
    const good = readFileSync(handler, 'utf8');
    let from = dev!.mark();
    // 201 is not a status listShelters declares.
    writeFileSync(
      handler,
      `import type { Handler } from './types';

export const listShelters: Handler<'listShelters'> = async () => ({ status: 201, body: [] });
`,
    );
    const [, line] = await dev!.waitFor(/src\/service\/handlers\/listShelters\.ts:(\d+):\d+ {2}TS\d+: /, { from, timeoutMs: 180_000 });
    expect(Number(line)).toBe(3);
    await dev!.waitFor(/DEV: types: 1 error \([\d.]+ m?s\); the server keeps running/, { from });
    // The server runs the new code; response validation refuses the undeclared status.
    await answers('/v1/shelters', 500);
    expect((await fetch(`${dev!.url}/healthz`)).status).toBe(200);

    from = dev!.mark();
    writeFileSync(handler, good);
    await dev!.waitFor(/DEV: types: all fixed, no errors/, { from, timeoutMs: 180_000 });
    await answers('/v1/shelters', 200);
  });

  it('the second contract document (openapi/v2/openapi.yaml) is watched too: broken, it is named while both versions keep serving', async () => {
    const v2 = path.join(root, 'openapi', 'v2', 'openapi.yaml');
    const good = readFileSync(v2, 'utf8');
    let from = dev!.mark();
    const broken = good.replace(/#\/components\/schemas\/Pet(?=['"])/, '#/components/schemas/Pets2');
    expect(broken).not.toBe(good);
    writeFileSync(v2, broken);
    await dev!.waitFor(/DEV: openapi\/v2\/openapi\.yaml changed: 1 error, not applied/, { from });
    const [, line] = await dev!.waitFor(/openapi\/v2\/openapi\.yaml:(\d+):\d+ {2}error {2}no-unresolved-refs: /, { from });
    expect(Number(line)).toBe(broken.split('\n').findIndex((text) => text.includes('Pets2')) + 1);
    expect((await api('/v1/shelters')).status).toBe(200);
    expect((await api('/v2/pets')).status).toBe(200);

    from = dev!.mark();
    writeFileSync(v2, good);
    await dev!.waitFor(/DEV: openapi\/v2\/openapi\.yaml changed: fixed/, { from });
    await answers('/v1/shelters', 200);
    await answers('/v2/pets', 200);
  });

  it('Ctrl-C stops everything: no watcher, checker or server left, the port free', async () => {
    await interruptAndCheck(dev!);
    dev = undefined;
  });
});

describe('npm run dev -- --mock', () => {
  it('a new operation answers the example of its contract; Ctrl-C leaves nothing behind', async () => {
    dev = await startDev(root, { port: await freePort(), args: ['--mock'] });
    expect(dev.output()).toMatch(/DEV: ready in .*, mock mode;/);
    expect(dev.output()).not.toContain('No API keys existed'); // the same database: the keys are kept
    const document = readSpec();
    document['paths']['/shelters/featured'] = {
      get: { ...shelters.get, operationId: 'listFeaturedShelters', summary: 'List featured shelters' },
    };
    const from = dev.mark();
    writeSpec(document);
    expect(await answers('/v1/shelters/featured', 200)).toEqual([{ name: 'Happy Paws' }]);
    await dev.waitFor(/DEV: the new contract: new listFeaturedShelters \(answers its example until implemented\): reloaded in /, { from });
    expect(existsSync(path.join(root, 'src/service/handlers/listFeaturedShelters.ts'))).toBe(true);
    await answers('/v1/shelters', 200, (body) => (body as unknown[]).length === 2); // implemented: real, not mocked
    await interruptAndCheck(dev);
    dev = undefined;
  });
});
