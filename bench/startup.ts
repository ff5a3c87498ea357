/**
 * `node --import tsx bench/startup.ts [--operations 10,100,1000] [--starts 3]`
 * (`npm run bench:startup`): what a large document costs the server as
 * `npm start` runs it. For each size, a document of that many operations is
 * generated from a template (resources of five operations each: list with
 * query parameters, create and update with JSON bodies, get, delete; schemas
 * in components, an Error response by $ref, bearer security) and dropped
 * into a copy of the project as `openapi/v3`, the way a designer adds a
 * version: generate, scaffold, build. Then the compiled server starts
 * (`NODE_ENV=production`, the Node flags of `npm start`) and the bench
 * reports, against the same copy without v3:
 *
 * - the start: from spawn to the first `GET /healthz` answered (median of
 *   `--starts`);
 * - RSS at rest after the start, then after one request to every operation
 *   of v3 (what compiles on first use is paid then);
 * - the latency of each operation's first request (median and slowest), so
 *   work moved from the start to the first request is seen.
 *
 * `--keep` leaves the copies in the OS temp dir (printed), to profile a start
 * (`node --cpu-prof dist/src/server.js` in one of them).
 *
 * Writes bench/results/startup.md and startup.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { copyProject } from '../test/support/project-copy';
import { ROOT, ServerProcess, killAllServers, median, prepareProjectDatabase, projectSpec, rssMb, runCommand, sleep } from './lib';

/** Operations per resource of the template. */
const PER_RESOURCE = 5;

/** A document of `operations` operations (a multiple of five), every one a request the server validates and a stub answers. */
function templateDocument(operations: number): object {
  const resources = Math.ceil(operations / PER_RESOURCE);
  const paths: Record<string, object> = {};
  const schemas: Record<string, object> = {
    Error: {
      type: 'object',
      required: ['code', 'message', 'status'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
    },
  };
  const errors = {
    '400': { $ref: '#/components/responses/Problem' },
    '401': { $ref: '#/components/responses/Problem' },
  };
  for (let r = 0; r < resources; r++) {
    const name = `Thing${r}`;
    schemas[name] = {
      type: 'object',
      required: ['id', 'name', 'status'],
      properties: {
        id: { type: 'integer', minimum: 1 },
        name: { type: 'string', minLength: 1, maxLength: 100 },
        status: { type: 'string', enum: ['draft', 'live', 'retired'] },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 30 } },
        created: { type: 'string', format: 'date-time' },
        owner: { type: 'object', properties: { id: { type: 'integer' }, email: { type: 'string', format: 'email' } } },
      },
    };
    schemas[`New${name}`] = {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100 },
        status: { type: 'string', enum: ['draft', 'live', 'retired'], default: 'draft' },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 30 } },
      },
    };
    const one = { content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } };
    const body = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/New${name}` } } } };
    const id = { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } };
    paths[`/things${r}`] = {
      get: {
        operationId: `list${name}`,
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'status', in: 'query', schema: { type: 'string', enum: ['draft', 'live', 'retired'] } },
          { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: 200 } },
        ],
        responses: {
          '200': { description: 'A page.', content: { 'application/json': { schema: { type: 'array', items: { $ref: `#/components/schemas/${name}` } } } } },
          ...errors,
        },
      },
      post: { operationId: `create${name}`, requestBody: body, responses: { '201': { description: 'Created.', ...one }, ...errors } },
    };
    paths[`/things${r}/{id}`] = {
      parameters: [id],
      get: { operationId: `get${name}`, responses: { '200': { description: 'One.', ...one }, ...errors } },
      put: { operationId: `update${name}`, requestBody: body, responses: { '200': { description: 'Updated.', ...one }, ...errors } },
      delete: { operationId: `delete${name}`, responses: { '204': { description: 'Deleted.' }, ...errors } },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: `Template of ${operations} operations`, version: '1.0.0' },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      responses: { Problem: { description: 'Refused.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
      schemas,
    },
  };
}

/** One valid request to every operation of the template, as the stubs receive them. */
function templateRequests(operations: number): Array<{ method: string; path: string; body?: string }> {
  const requests: Array<{ method: string; path: string; body?: string }> = [];
  const body = JSON.stringify({ name: 'Widget', tags: ['a'] });
  for (let r = 0; r < Math.ceil(operations / PER_RESOURCE); r++) {
    requests.push(
      { method: 'GET', path: `/v3/things${r}?limit=10&status=live` },
      { method: 'POST', path: `/v3/things${r}`, body },
      { method: 'GET', path: `/v3/things${r}/1` },
      { method: 'PUT', path: `/v3/things${r}/1`, body },
      { method: 'DELETE', path: `/v3/things${r}/1` },
    );
  }
  return requests;
}

interface Size {
  operations: number;
  startMs: number[];
  restMb: number;
  afterEveryOperationMb: number | undefined;
  firstRequestMs: { median: number; max: number } | undefined;
}

/** A copy of the project with the template as openapi/v3 (none for 0), generated, scaffolded and built. */
async function preparedCopy(scratch: string, operations: number): Promise<string> {
  const root = copyProject(path.join(scratch, `project-${operations}`));
  if (operations > 0) {
    mkdirSync(path.join(root, 'openapi/v3'), { recursive: true });
    writeFileSync(path.join(root, 'openapi/v3/openapi.yaml'), stringify(templateDocument(operations), { aliasDuplicateObjects: false }));
    for (const script of ['generate', 'scaffold']) await runCommand('npm', ['run', '--silent', script], { cwd: root });
  }
  await runCommand('npm', ['run', '--silent', 'build'], { cwd: root });
  return root;
}

async function measure(scratch: string, operations: number, starts: number): Promise<Size> {
  const root = await preparedCopy(scratch, operations);
  const database = await prepareProjectDatabase(scratch, `startup-${operations}`, 10, root);
  const startMs: number[] = [];
  let restMb = 0;
  let afterEveryOperationMb: number | undefined;
  let firstRequestMs: Size['firstRequestMs'];
  for (let run = 0; run < starts; run++) {
    const spawned = performance.now();
    const server = await ServerProcess.start(projectSpec(`startup-${operations}`, `project + ${operations} operations`, database, undefined, root));
    startMs.push(performance.now() - spawned);
    try {
      if (run < starts - 1) continue;
      // At rest: what the start left, after the first GCs settle.
      await sleep(2_000);
      restMb = rssMb(server.pid) ?? 0;
      if (operations === 0) continue;
      const latencies: number[] = [];
      for (const request of templateRequests(operations)) {
        const started = performance.now();
        const response = await fetch(server.baseUrl + request.path, {
          method: request.method,
          headers: { authorization: `Bearer ${database.key}`, ...(request.body && { 'content-type': 'application/json' }) },
          ...(request.body && { body: request.body }),
        });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        if (response.status !== 501) throw new Error(`${request.method} ${request.path} answered ${response.status}, not the stub's 501`);
      }
      await sleep(2_000);
      afterEveryOperationMb = rssMb(server.pid);
      firstRequestMs = { median: median(latencies)!, max: Math.max(...latencies) };
    } finally {
      await server.stop();
    }
  }
  return { operations, startMs, restMb, afterEveryOperationMb, firstRequestMs };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      operations: { type: 'string', default: '10,100,1000' },
      starts: { type: 'string', default: '3' },
      keep: { type: 'boolean', default: false },
    },
  });
  const sizes = [0, ...values.operations.split(',').map(Number)];
  if (sizes.some((n) => !Number.isInteger(n) || n < 0 || n % PER_RESOURCE !== 0)) throw new Error(`--operations: multiples of ${PER_RESOURCE}`);
  const starts = Number(values.starts);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-startup-'));
  const results: Size[] = [];
  try {
    for (const operations of sizes) {
      console.log(`${operations} operations: copy, generate, scaffold, build, ${starts} starts...`);
      results.push(await measure(scratch, operations, starts));
    }
  } finally {
    killAllServers();
    if (values.keep) console.log(`kept: ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
  const base = results[0]!;
  const fixed = (n: number | undefined, digits = 0): string => (n === undefined ? 'n/a' : n.toFixed(digits));
  const signed = (n: number, digits = 0): string => `${n < 0 ? '−' : '+'}${Math.abs(n).toFixed(digits)}`;
  const rows = results.map((size) => {
    const start = median(size.startMs)!;
    return `| ${size.operations === 0 ? 'v1 + v2 only' : `+ v3 of ${size.operations}`} | ${fixed(start)} | ${size.operations === 0 ? '' : signed(start - median(base.startMs)!)} | ${fixed(size.restMb, 1)} | ${size.operations === 0 ? '' : signed(size.restMb - base.restMb, 1)} | ${fixed(size.afterEveryOperationMb, 1)} | ${size.firstRequestMs ? `${fixed(size.firstRequestMs.median, 1)} / ${fixed(size.firstRequestMs.max, 1)}` : ''} |`;
  });
  const markdown = [
    '# Start-up and memory against the size of the document',
    '',
    `A template document of N operations (five per resource) added as v3 to a copy of the project, generated, scaffolded and built; the compiled server started ${starts} times as \`npm start\` runs it in production. Start: spawn to the first \`GET /healthz\` answered (median). RSS at rest 2 s after the start; then after one request to every v3 operation.`,
    '',
    '| document | start ms | added | RSS at rest MB | added | RSS after every operation once MB | first request per operation ms (median / slowest) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `_Node ${process.version}, ${os.cpus()[0]?.model ?? ''} × ${os.cpus().length}, ${new Date().toISOString()}; \`npm run bench:startup\`._`,
    '',
  ].join('\n');
  console.log(markdown);
  const out = path.join(ROOT, 'bench', 'results', 'startup');
  writeFileSync(`${out}.md`, markdown);
  writeFileSync(`${out}.json`, `${JSON.stringify({ node: process.version, starts, results }, null, 2)}\n`);
  console.log('wrote bench/results/startup.md and startup.json');
}

main().catch((error: unknown) => {
  killAllServers();
  console.error(`bench:startup: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
