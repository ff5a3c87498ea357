/**
 * `npm run new -- <document> <dir>` as a designer runs it, with three public
 * documents from outside this repository (test/fixtures/new-project/, each
 * with its source and licence; OpenAPI 3.0 and 3.1, JSON and YAML, one split
 * across six files), this repository's own OpenAPI 3.2 document, and one whose
 * operations all take an access token only: the project is written, installed with npm
 * from the packed engine and toolchain, and driven the way its README says:
 * `npm test`, `npm start`, `npm run keys -- create`, requests over HTTP with
 * the key where the document puts it, a handler replacing a stub, a
 * handler breaking the document failing `npm run typecheck`, `npm run mock`
 * and `npm run api:diff`. One install serves the four projects (their
 * node_modules are the same packages).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './support/http';
import { startTestIssuer } from './support/jwks';
import { PROJECT_ROOT, tempDir } from './support/paths';

const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'new-project');

/** npm's own variables of the process running the tests stay out of the projects' commands (INIT_CWD names where a command was typed). */
const cleanEnv = (env: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$|TSX_TSCONFIG_PATH$|NODE_ENV$)/.test(name)));
  return { ...inherited, ...env };
};

function npm(cwd: string, args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: cleanEnv(env), timeout: 300_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Served {
  url: string;
  stop(): Promise<void>;
}

/** `npm start` (or another script, with `args` after `--`) in `root` on a free port, once it says it serves. */
async function serve(root: string, script: string, env: Record<string, string> = {}, args: string[] = []): Promise<Served> {
  const port = await freePort();
  const command = ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])];
  const child: ChildProcess = spawn('npm', command, { cwd: root, env: cleanEnv({ PORT: String(port), ...env }), detached: true });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start in 120 s:\n${output}`)), 120_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/serving .* on http:\/\/127\.0\.0\.1:/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}):\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        process.kill(-child.pid!, 'SIGTERM');
      }),
  };
}

const errorObject = (status: number) => ({ code: expect.any(String), message: expect.any(String), status });

let work: string;
const projects: Record<string, string> = {};

/** A document whose operations all require an oauth2 token (written for this test, in its scratch folder); its path relative to the fixtures. */
function writeTokenOnlyDocument(): string {
  const file = path.join(work, 'tokens.yaml');
  writeFileSync(
    file,
    `openapi: 3.1.0
info: { title: Tokens only, version: 1.0.0 }
security: [{ oauth: [read] }]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { clientCredentials: { tokenUrl: https://issuer.example/token, scopes: { read: read } } } }
paths:
  /things:
    get:
      operationId: listThings
      responses: { '200': { description: ok, content: { application/json: { schema: { type: array, items: { type: string } } } } } }
`,
  );
  return path.relative(FIXTURES, file);
}

beforeAll(() => {
  work = tempDir();
  for (const [name, document] of [
    ['conduit', 'realworld-conduit/openapi.yml'],
    ['hydra', 'ory-hydra/api.json'],
    ['matrix', 'matrix-key-backup/key_backup.yaml'],
    // And an OpenAPI 3.2 document (QUERY, additional operations, streams): this repository's own.
    ['library', '../openapi-3.2/library-3.2.yaml'],
    // And one whose every operation takes an access token only: no key can open it.
    ['tokens', writeTokenOnlyDocument()],
  ] as const) {
    const created = npm(PROJECT_ROOT, ['run', '--silent', 'new', '--', path.join(FIXTURES, document), path.join(work, name)]);
    if (created.status !== 0) throw new Error(`npm run new ${document} failed:\n${created.stdout}${created.stderr}`);
    projects[name] = path.join(work, name);
  }
  const installed = npm(projects['conduit']!, ['install', '--no-audit', '--no-fund']);
  if (installed.status !== 0) throw new Error(`npm install failed:\n${installed.stdout}${installed.stderr}`);
  for (const name of ['hydra', 'matrix', 'library', 'tokens'])
    symlinkSync(path.join(projects['conduit']!, 'node_modules'), path.join(projects[name]!, 'node_modules'), 'dir');
}, 600_000);

describe('a new project, as written', () => {
  test.each(['conduit', 'hydra', 'matrix', 'library'])(
    '%s: the document, generated types, a stub per operation, the toolchain scripts, a first release (none for Hydra: its info.version is empty)',
    (name) => {
      const root = projects[name]!;
      const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
        dependencies: Record<string, string>;
      };
      for (const script of ['start', 'test', 'generate', 'scaffold', 'typecheck', 'dev', 'mock', 'api:diff', 'contract', 'lint', 'keys'])
        expect(manifest.scripts).toHaveProperty([script]);
      expect(manifest.dependencies['@spec-first/engine']).toMatch(/^file:vendor\/spec-first-engine-[\d.]+\.tgz$/);
      expect(existsSync(path.join(root, manifest.dependencies['@spec-first/engine']!.slice('file:'.length)))).toBe(true);
      expect(existsSync(path.join(root, 'generated', 'v1', 'openapi.ts'))).toBe(true);
      const stubs = readdirSync(path.join(root, 'src', 'handlers')).filter((file) => !['index.ts', 'types.ts', 'context.ts'].includes(file));
      expect(stubs.length).toBe({ conduit: 19, hydra: 50, matrix: 14, library: 7 }[name]);
      expect(existsSync(path.join(root, 'openapi', 'v1', 'releases', 'index.json'))).toBe(name !== 'hydra');
      expect(statSync(root).mode & 0o777).toBe(0o777 & ~process.umask());
      expect(readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('npm install && npm start');
    },
  );

  test('a document split across files keeps its files', () => {
    expect(existsSync(path.join(projects['matrix']!, 'openapi', 'v1', 'definitions', 'errors', 'error.yaml'))).toBe(true);
    expect(existsSync(path.join(projects['hydra']!, 'openapi', 'v1', 'openapi.json'))).toBe(true);
  });

  test.each(['conduit', 'hydra', 'matrix', 'library', 'tokens'])(
    '%s: npm test (typecheck, then the generated contract test against the real server) passes as generated',
    (name) => {
      const tested = npm(projects[name]!, ['test']);
      expect(`${tested.stdout}${tested.stderr}`).toMatch(/Tests:\s+\d+ passed, \d+ total/);
      expect(tested.status).toBe(0);
    },
    300_000,
  );

  test('npm run lint passes as generated; npm run api:diff finds no change against the first release', () => {
    const root = projects['conduit']!;
    expect(npm(root, ['run', '--silent', 'lint']).status).toBe(0);
    const diff = npm(root, ['run', '--silent', 'api:diff']);
    expect(diff.stdout).toContain('no changes');
    expect(diff.status).toBe(0);
  }, 120_000);
});

describe('serving, with keys from npm run keys -- create', () => {
  const createKey = (root: string): string => {
    const created = npm(root, ['run', '--silent', 'keys', '--', 'create']);
    expect(created.status).toBe(0);
    return created.stdout.trim().split('\n').pop()!;
  };

  test('matrix (apiKey in the query, and bearer): the key works in both places, nothing else does; 400 and 501 Error objects; /healthz, /docs, the document', async () => {
    const root = projects['matrix']!;
    const server = await serve(root, 'start');
    try {
      const key = createKey(root);
      expect(key).toMatch(/^sk_[\w-]{43}$/);
      const anonymous = await fetch(`${server.url}/v1/room_keys/version`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject(errorObject(401));
      for (const response of [
        await fetch(`${server.url}/v1/room_keys/version?access_token=${key}`),
        await fetch(`${server.url}/v1/room_keys/version`, { headers: { authorization: `Bearer ${key}` } }),
      ]) {
        expect(response.status).toBe(501);
        expect(await response.json()).toMatchObject({ ...errorObject(501), code: 'not_implemented' });
      }
      expect((await fetch(`${server.url}/v1/room_keys/version`, { headers: { authorization: `Bearer ${key}x` } })).status).toBe(401);
      const bad = await fetch(`${server.url}/v1/room_keys/keys?version=1`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{"not":"rooms"}',
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject(errorObject(400));
      expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
      expect((await fetch(`${server.url}/docs/`)).status).toBe(200);
      expect(await (await fetch(`${server.url}/openapi.json`)).json()).toMatchObject({ info: { title: 'Matrix Client-Server Key Backup API' } });
      // Revoked: refused from the next request on, by the running server.
      const id = npm(root, ['run', '--silent', 'keys', '--', 'list']).stdout.trim().split('\t')[0]!;
      expect(npm(root, ['run', '--silent', 'keys', '--', 'revoke', id]).status).toBe(0);
      expect((await fetch(`${server.url}/v1/room_keys/version?access_token=${key}`)).status).toBe(401);
    } finally {
      await server.stop();
    }
  }, 180_000);

  test('50 simultaneous npm run keys -- create: 50 keys, each accepted; a line cut short by a crash loses no key before or after it', async () => {
    const root = projects['matrix']!;
    const keysFile = path.join(root, 'data', 'concurrent.jsonl');
    const create = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn('node', ['--import', 'tsx', 'scripts/keys.ts', 'create'], {
          cwd: root,
          env: cleanEnv({ KEYS_FILE: keysFile, PATH: `${root}/node_modules/.bin:${process.env['PATH']}` }),
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
        });
        child.once('exit', (code) => (code === 0 ? resolve(out.trim().split('\n').pop()!) : reject(new Error(`keys create exited ${code}`))));
      });
    const keys = await Promise.all(Array.from({ length: 50 }, create));
    expect(new Set(keys).size).toBe(50);
    // kill -9 in the middle of an append leaves a line cut short: it is skipped, and the next key still lands.
    appendFileSync(keysFile, '{"op":"create","id":"k_torn","ha');
    const after = await create();
    const server = await serve(root, 'start', { KEYS_FILE: keysFile });
    try {
      for (const key of [...keys, after]) expect([key, (await fetch(`${server.url}/v1/room_keys/version?access_token=${key}`)).status]).toEqual([key, 501]);
    } finally {
      await server.stop();
    }
    const listed = npm(root, ['run', '--silent', 'keys', '--', 'list'], { KEYS_FILE: keysFile }).stdout.trim().split('\n');
    expect(listed).toHaveLength(51);
  }, 240_000);

  test('hydra (http basic: the key as the user name, an empty password): 501 with it, 401 with a challenge without it, 400 for a form without its required field', async () => {
    const root = projects['hydra']!;
    const server = await serve(root, 'start');
    try {
      const key = createKey(root);
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const basic = `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
      const revoked = await fetch(`${server.url}/v1/oauth2/revoke`, { method: 'POST', headers: { ...form, authorization: basic }, body: 'token=abc' });
      expect(revoked.status).toBe(501);
      const anonymous = await fetch(`${server.url}/v1/oauth2/revoke`, { method: 'POST', headers: form, body: 'token=abc' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      const missing = await fetch(`${server.url}/v1/oauth2/revoke`, { method: 'POST', headers: { ...form, authorization: basic }, body: 'client_id=x' });
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject(errorObject(400));
    } finally {
      await server.stop();
    }
  }, 180_000);

  test('conduit (apiKey in a header): a handler replacing its stub answers; one returning what the document does not declare fails npm run typecheck', async () => {
    const root = projects['conduit']!;
    const handler = path.join(root, 'src', 'handlers', 'GetTags.ts');
    writeFileSync(
      handler,
      "import type { Handler } from './types';\n\nexport const GetTags: Handler<'GetTags'> = async () => ({ status: 200, body: { tags: [42] } });\n",
    );
    const broken = npm(root, ['run', '--silent', 'typecheck']);
    expect(broken.status).not.toBe(0);
    expect(`${broken.stdout}${broken.stderr}`).toContain('src/handlers/GetTags.ts');
    writeFileSync(
      handler,
      "import type { Handler } from './types';\n\nexport const GetTags: Handler<'GetTags'> = async () => ({ status: 200, body: { tags: ['dragons'] } });\n",
    );
    expect(npm(root, ['run', '--silent', 'typecheck']).status).toBe(0);
    const server = await serve(root, 'start');
    try {
      const tags = await fetch(`${server.url}/v1/tags`);
      expect(tags.status).toBe(200);
      expect(await tags.json()).toEqual({ tags: ['dragons'] });
      const key = createKey(root);
      expect((await fetch(`${server.url}/v1/user`)).status).toBe(401);
      expect((await fetch(`${server.url}/v1/user`, { headers: { authorization: key } })).status).toBe(501);
    } finally {
      await server.stop();
    }
  }, 240_000);

  test('hydra (oauth2): an access token verified with OAUTH2_JWKS_URL, OAUTH2_ISSUER and OAUTH2_AUDIENCE passes; one for another audience does not', async () => {
    const root = projects['hydra']!;
    const issuer = await startTestIssuer();
    const server = await serve(root, 'start', { OAUTH2_JWKS_URL: issuer.jwksUrl, OAUTH2_ISSUER: issuer.issuer, OAUTH2_AUDIENCE: 'hydra-api' });
    try {
      const userinfo = (token?: string) => fetch(`${server.url}/v1/userinfo`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect((await userinfo(await issuer.sign({ sub: 'alice', iss: issuer.issuer, aud: 'hydra-api' }))).status).toBe(501);
      const elsewhere = await userinfo(await issuer.sign({ sub: 'alice', iss: issuer.issuer, aud: 'another-api' }));
      expect(elsewhere.status).toBe(401);
      expect(await elsewhere.json()).toMatchObject(errorObject(401));
      expect((await userinfo()).status).toBe(401);
    } finally {
      await server.stop();
      await issuer.close();
    }
  }, 180_000);

  test('npm run contract fuzzes the running server from outside: N passed, 0 failed', async () => {
    const root = projects['matrix']!;
    const server = await serve(root, 'start');
    try {
      const key = createKey(root);
      const fuzzed = npm(root, [
        'run',
        '--silent',
        'contract',
        '--',
        '--base-url',
        server.url,
        '--version',
        'v1',
        '--key',
        key,
        '--max-examples',
        '3',
        '--seed',
        '7',
      ]);
      expect(fuzzed.stdout.trim().split('\n').pop()).toMatch(/^\d+ passed, 0 failed/);
      expect(fuzzed.status).toBe(0);
    } finally {
      await server.stop();
    }
  }, 180_000);

  test('a document edited into one the engine cannot serve stops npm start, naming the operation and why', () => {
    const root = projects['matrix']!;
    const document = path.join(root, 'openapi', 'v1', 'openapi.yaml');
    const before = readFileSync(document, 'utf8');
    try {
      writeFileSync(
        document,
        before
          .replace(/^security:.*$/m, '')
          .replace(
            /^paths:\n/m,
            'paths:\n  /broken:\n    get:\n      operationId: broken\n      security: [{ nowhere: [] }]\n      responses: { "204": { description: none } }\n',
          ),
      );
      const started = spawnSync('node', ['--import', 'tsx', 'src/server.ts'], {
        cwd: root,
        encoding: 'utf8',
        env: cleanEnv({ PORT: '0', PATH: `${root}/node_modules/.bin:${process.env['PATH']}` }),
        timeout: 60_000,
      });
      expect(started.status).toBe(1);
      expect(started.stderr).toMatch(/broken.*nowhere/s);
    } finally {
      writeFileSync(document, before);
    }
  }, 120_000);

  test('npm run dev: an operation added to the document is served (501) and gets its stub and types, with no other command', async () => {
    const root = projects['matrix']!;
    const document = path.join(root, 'openapi', 'v1', 'openapi.yaml');
    const before = readFileSync(document, 'utf8');
    const server = await serve(root, 'dev');
    try {
      writeFileSync(
        document,
        before.replace(
          /^paths:\n/m,
          'paths:\n  /ping:\n    get:\n      operationId: ping\n      responses:\n        "200":\n          description: pong\n          content: { application/json: { schema: { type: object } } }\n',
        ),
      );
      const deadline = Date.now() + 60_000;
      let status = 0;
      while (Date.now() < deadline && status !== 501) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        status = await fetch(`${server.url}/v1/ping`).then(
          (response) => response.status,
          () => 0,
        );
      }
      expect(status).toBe(501);
      expect(existsSync(path.join(root, 'src', 'handlers', 'ping.ts'))).toBe(true);
      expect(readFileSync(path.join(root, 'generated', 'v1', 'operations.ts'), 'utf8')).toContain("ping: { method: 'get', path: '/ping'");
    } finally {
      await server.stop();
      writeFileSync(document, before);
      rmSync(path.join(root, 'src', 'handlers', 'ping.ts'), { force: true });
      npm(root, ['run', '--silent', 'generate']);
      npm(root, ['run', '--silent', 'scaffold']);
    }
  }, 180_000);

  test('npm run mock answers a stub with the document example', async () => {
    const root = projects['conduit']!;
    const server = await serve(root, 'mock');
    try {
      const profile = await fetch(`${server.url}/v1/profiles/jake`);
      expect(profile.status).toBe(200);
      expect(await profile.json()).toHaveProperty('profile');
    } finally {
      await server.stop();
    }
  }, 180_000);

  test('npm run mock -- --stateful answers from memory: a list starts empty, an unknown item is a 404', async () => {
    const root = projects['conduit']!;
    const server = await serve(root, 'mock', {}, ['--stateful']);
    try {
      const list = await fetch(`${server.url}/v1/articles`);
      expect(list.headers.get('x-mock')).toBe('stateful');
      expect(await list.json()).toEqual({ articles: [], articlesCount: 0 });
      expect((await fetch(`${server.url}/v1/articles/unknown`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
