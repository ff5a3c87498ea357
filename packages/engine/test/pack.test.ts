/**
 * The package as a user installs it: `npm pack`, then that tarball installed
 * into an empty folder (its dependencies from the registry, as usual), then a
 * server of a few lines serving a document of its own, driven over HTTP.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PACKAGE_ROOT = path.resolve(__dirname, '..');
const NPM_ENV = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

const DOCUMENT = `
openapi: 3.0.3
info: { title: Echo, version: 1.0.0 }
security: [{ basicKey: [] }]
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - { name: times, in: query, schema: { type: integer, minimum: 1, maximum: 3, default: 1 } }
        - { name: X-Tags, in: header, schema: { type: array, items: { type: string } } }
      responses:
        '200':
          description: the words
          content: { application/json: { schema: { type: object, required: [words], properties: { words: { type: array, items: { type: string } } } } } }
  /later:
    get:
      operationId: later
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
components:
  securitySchemes:
    basicKey: { type: http, scheme: basic }
`;

const SERVER = `
import { ApiError, createEngine, notImplementedHandler } from '@spec-first/engine';
const engine = await createEngine({
  documents: [{
    name: 'v1',
    document: 'openapi.yaml',
    handlers: {
      echo: async ({ query, headers }) => ({ status: 200, body: { words: Array(query.times).fill(headers['X-Tags'] ?? ['none']).flat() } }),
      later: notImplementedHandler('later'),
    },
  }],
  credentials: { key: (key) => { if (key !== 'sk_test') throw new ApiError(401, 'unauthorized', 'unknown key'); return { principal: 'me' }; } },
});
const server = engine.app.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
`;

describe('npm pack of the engine, installed into an empty folder', () => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'engine-pack-'));
  let port = 0;
  let server: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: PACKAGE_ROOT, env: NPM_ENV, stdio: 'pipe' });
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'))!;
    const listing = execFileSync('tar', ['-tzf', path.join(work, tarball)], { encoding: 'utf8' }).split('\n');
    expect(listing).toContain('package/dist/index.js');
    expect(listing).toContain('package/README.md');
    expect(listing.filter((file) => file.startsWith('package/src/') || file.startsWith('package/test/'))).toEqual([]);

    const app = path.join(work, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'echo', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--silent', path.join(work, tarball)], { cwd: app, env: NPM_ENV, stdio: 'pipe' });
    writeFileSync(path.join(app, 'openapi.yaml'), DOCUMENT);
    writeFileSync(path.join(app, 'server.mjs'), SERVER);
    server = spawn(process.execPath, ['server.mjs'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    port = await new Promise<number>((resolve, reject) => {
      let output = '';
      const read = (chunk: Buffer): void => {
        output += chunk.toString();
        const found = /listening on (\d+)/.exec(output);
        if (found) resolve(Number(found[1]));
      };
      server!.stdout!.on('data', read);
      server!.stderr!.on('data', read);
      server!.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
    });
  }, 240_000);

  afterAll(() => {
    server?.kill();
    rmSync(work, { recursive: true, force: true });
  });

  const get = (target: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}${target}`, { headers });
  const key = { Authorization: `Basic ${Buffer.from('sk_test:').toString('base64')}` };

  it('serves the document with its handler, the key as a basic user name', async () => {
    const res = await get('/v1/echo?times=2', { ...key, 'X-Tags': 'a,b' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ words: ['a', 'b', 'a', 'b'] });
  });

  it('refuses what the document refuses, with Error objects', async () => {
    const missing = await get('/v1/echo');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Basic/);
    const bounds = await get('/v1/echo?times=4', key);
    expect(bounds.status).toBe(400);
    expect(await bounds.json()).toEqual({ code: 'invalid_request', message: expect.stringMatching(/times/), status: 400 });
    const stub = await get('/v1/later', key);
    expect(stub.status).toBe(501);
    expect(((await stub.json()) as { code: string }).code).toBe('not_implemented');
  });

  it('serves /healthz, the document and /docs', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect(((await (await get('/openapi.json')).json()) as { info: { title: string } }).info.title).toBe('Echo');
    expect((await get('/docs/')).status).toBe(200);
  });
});
