/**
 * `npm run contract` against the real app on a real port: the healthy server
 * passes, and each planted fault (one at a time, planted by wrapping handlers,
 * middleware or the validator's copy of the spec, never by editing src/) is
 * reported by the check that names it. Fixed seed, few examples: seconds.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import express, { type Express, type RequestHandler } from 'express';
import { handlers, registries } from '../src/service/handlers';
import { servedVersions } from '../src/versions';
import { loadSpec } from './support/contracts';
import { arrayAt, objectAt } from './support/document-edits';
import { runContract, type ContractOptions, type ContractResult } from '@spec-first/toolchain';
import { schemaErrors, type CheckName } from '@spec-first/toolchain';
import { casesFor } from '@spec-first/toolchain';
import { loadContract } from '@spec-first/toolchain';
import { startTestApp, type TestApp } from './support/test-app';
import { PROJECT_ROOT } from './support/paths';
import { listenOnFreePort } from './support/http';

const SPEC_FILE = path.join(PROJECT_ROOT, 'openapi/v1/openapi.yaml');
const V2_SPEC_FILE = path.join(PROJECT_ROOT, 'openapi/v2/openapi.yaml');
const SEED = 20261122;

let t: TestApp | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await t?.close();
  t = undefined;
  close = undefined;
});

/** Starts the real app (options as for startTestApp), optionally behind `front` middleware, on a free port; `baseUrl` ends in /v1, `origin` has no path. */
async function serve(options: Parameters<typeof startTestApp>[0] = {}, front?: RequestHandler): Promise<{ baseUrl: string; key: string; origin: string }> {
  t = await startTestApp(options);
  let app: Express = t.app;
  if (front) app = express().use(front).use(t.app);
  const listening = await listenOnFreePort(app);
  close = listening.close; // closes every connection: a planted hang must not hold the close
  // A staff key, as CI's: the writes only staff may make (updatePet, completing orders) are fuzzed through to their success.
  const key = (await t.issueKey('enterprise', { requestsPerMinute: 100_000, requestsPerDay: 10_000_000, role: 'staff' })).replace(/^Bearer /, '');
  return { baseUrl: `${listening.url}/v1`, key, origin: listening.url };
}

const fuzz = (target: { baseUrl: string; key: string }, options: Partial<ContractOptions> = {}): Promise<ContractResult> =>
  runContract({ ...target, specFile: SPEC_FILE, seed: SEED, maxExamples: 3, rate: 1000, timeLimitSeconds: 60, ...options });

/** The failures of a run as `check operationId: label`, for readable assertions. */
const failures = (result: ContractResult): string[] =>
  result.cases.flatMap((c) => c.failures.map((f) => `${f.check} ${c.operationId}: ${c.label} (got ${f.got.slice(0, 120)})`));

function expectReported(result: ContractResult, check: CheckName, operationId: string, label?: RegExp): void {
  const found = result.cases.some((c) => c.operationId === operationId && (!label || label.test(c.label)) && c.failures.some((f) => f.check === check));
  if (!found) throw new Error(`${check} on ${operationId} ${label ?? ''} not reported; failures:\n${failures(result).join('\n')}`);
  expect(result.failed).toBeGreaterThan(0);
}

describe('the generated cases', () => {
  const contract = loadContract(SPEC_FILE);
  const everyCase = contract.operations.flatMap((operation) => casesFor(operation, { seed: SEED, maxExamples: 50 }));

  it('positive bodies and parameters are valid against the contract; negative bodies are not', () => {
    const problems: string[] = [];
    for (const test of everyCase) {
      const { operation, input } = test;
      if (test.kind === 'positive') {
        if (operation.body && schemaErrors(operation.body.schema, input.body))
          problems.push(`${operation.operationId} ${test.label}: invalid body ${JSON.stringify(input.body)}`);
        for (const parameter of operation.parameters) {
          const value = input.params[parameter.name];
          if (value !== undefined && schemaErrors(parameter.schema, value)) problems.push(`${operation.operationId} ${test.label}: invalid ${parameter.name}`);
        }
      } else if (test.kind === 'negative' && test.label.startsWith('body: ') && input.rawBody === undefined && input.body !== undefined) {
        if (!schemaErrors(operation.body!.schema, input.body))
          problems.push(`${operation.operationId} ${test.label}: valid body ${JSON.stringify(input.body)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(everyCase.filter((c) => c.kind === 'negative').length).toBeGreaterThan(20);
  });

  it.each([
    ['v1', SPEC_FILE],
    ['v2', V2_SPEC_FILE],
  ])('%s: a server-issued parameter (listPets cursor, x-issued-by: server) is never made up in a positive case, only in negative ones', (_version, file) => {
    const listPets = loadContract(file).operations.find((operation) => operation.operationId === 'listPets')!;
    expect(listPets.parameters.find((parameter) => parameter.name === 'cursor')).toMatchObject({ in: 'query', issuedByServer: true });
    const cases = casesFor(listPets, { seed: SEED, maxExamples: 50 });
    expect(cases.filter((c) => c.kind === 'positive' && 'cursor' in c.input.params).map((c) => c.label)).toEqual([]);
    const negative = cases.filter((c) => c.kind === 'negative' && 'cursor' in c.input.params).map((c) => c.label);
    expect(negative).toEqual(
      expect.arrayContaining(['query.cursor: a value the server did not issue (x-issued-by: server)', 'query.cursor: longer than maxLength 256']),
    );
  });

  it.each([
    ['v1', SPEC_FILE],
    ['v2', V2_SPEC_FILE],
  ])('%s: header parameters (createPet Idempotency-Key) only carry values fetch can send, in every case', (_version, file) => {
    const operations = loadContract(file).operations;
    const headers = operations.flatMap((operation) =>
      operation.parameters.filter((parameter) => parameter.in === 'header').map((parameter) => [operation, parameter] as const),
    );
    expect(headers.map(([operation, parameter]) => `${operation.operationId} ${parameter.name}`)).toContain('createPet Idempotency-Key');
    const unsendable: string[] = [];
    let sent = 0;
    for (const [operation, parameter] of headers) {
      for (const test of casesFor(operation, { seed: SEED, maxExamples: 200 })) {
        const value = test.input.params[parameter.name];
        if (value === undefined) continue;
        sent++;
        // What fetch itself accepts, unchanged.
        try {
          if (new Headers({ [parameter.name]: String(value) }).get(parameter.name) !== String(value))
            unsendable.push(`${test.label}: ${JSON.stringify(value)} (changed)`);
        } catch {
          unsendable.push(`${test.label}: ${JSON.stringify(value)}`);
        }
      }
    }
    expect(unsendable).toEqual([]);
    expect(sent).toBeGreaterThan(50); // random keys, edges and violations (too long, not matching the pattern) are still sent
  });

  it('the same seed gives the same cases, another seed other random ones', () => {
    const labelsAndInputs = (seed: number): string =>
      JSON.stringify(contract.operations.flatMap((operation) => casesFor(operation, { seed, maxExamples: 5 }).map((c) => [c.label, c.input])));
    expect(labelsAndInputs(1)).toEqual(labelsAndInputs(1));
    expect(labelsAndInputs(1)).not.toEqual(labelsAndInputs(2));
  });
});

describe('the healthy server', () => {
  it('passes: every operation, positive, negative, auth and read-back cases', async () => {
    const result = await fuzz(await serve());
    expect(failures(result)).toEqual([]);
    expect(result.stoppedReason).toBeUndefined();
    const kinds = new Set(result.cases.map((c) => `${c.operationId}/${c.kind}`));
    for (const expected of [
      'createPet/positive',
      'createPet/negative',
      'createPet/auth',
      'listPets/positive',
      'listPets/negative',
      'getPet/positive',
      'getPet/negative',
      'getPet/stateful',
      'listStoreOrders/auth',
      'listPets/method',
      'getPet/method',
      'listStoreOrders/method',
    ]) {
      expect(kinds).toContain(expected);
    }
    // Edges and each enum value are among the cases, and the 501 stub is reported as skipped, not failed.
    const labels = result.cases.map((c) => `${c.operationId}: ${c.label}`);
    expect(labels).toEqual(
      expect.arrayContaining([
        'listPets: query.limit: maximum 100',
        'listPets: query.status: enum value "sold"',
        'createPet: body.name: maxLength 200 in astral characters',
        'createPet: body: unknown property (additionalProperties: false)',
        'createPet: body: malformed JSON',
        'getPet: path.petId: below minimum 1',
      ]),
    );
    expect(result.notImplemented).toEqual(['listStoreOrders']);
    expect(result.passed).toBeGreaterThan(60);
  });

  it('is reproducible: the same seed sends the same requests', async () => {
    const target = await serve();
    const requests = async (): Promise<string[]> =>
      (await fuzz(target, { operations: ['listPets'] })).cases.map((c) => `${c.request.method} ${c.request.url} ${c.request.body ?? ''}`);
    expect(await requests()).toEqual(await requests());
  });
});

describe('v2 (openapi/v2/openapi.yaml: adoption, conditional requests)', () => {
  it('the healthy server passes under /v2, every operation of v2 and only those, conditional requests included', async () => {
    const target = await serve();
    const result = await fuzz({ baseUrl: `${target.origin}/v2`, key: target.key }, { specFile: V2_SPEC_FILE });
    expect(failures(result)).toEqual([]);
    expect(result.stoppedReason).toBeUndefined();
    expect(new Set(result.cases.map((c) => c.operationId))).toEqual(
      new Set(['createPet', 'exportPets', 'getPet', 'updatePet', 'listPets', 'listStoreOrders', 'placeOrder', 'getOrder', 'updateOrder']),
    );
    // The conditional sequences ran: 428 and 412 for both writes, 304 for both reads; and writes with the current tag succeeded.
    const conditional = result.cases.filter((c) => c.kind === 'stateful' && /If-(None-)?Match/.test(c.label) && c.outcome === 'passed');
    for (const operation of ['updatePet', 'updateOrder']) {
      expect(
        conditional
          .filter((c) => c.operationId === operation)
          .map((c) => c.status)
          .sort(),
      ).toEqual([412, 428]);
    }
    for (const operation of ['getPet', 'getOrder']) {
      expect(conditional.filter((c) => c.operationId === operation && c.label.startsWith('If-None-Match')).map((c) => c.status)).toEqual([304, 304]);
    }
    for (const operation of ['updatePet', 'updateOrder', 'placeOrder']) {
      expect(result.cases.some((c) => c.operationId === operation && c.kind === 'positive' && c.status !== undefined && c.status < 300)).toBe(true);
    }
    expect(result.cases.every((c) => c.request.url === '' || c.request.url.startsWith(`${target.origin}/v2/`))).toBe(true);
  });
});

/** The served versions, with some of v2's handlers replaced (a planted fault). */
const withV2Handlers = async (replaced: Partial<typeof registries.v2>) =>
  (await servedVersions(undefined)).map((version) => (version.name === 'v2' ? { ...version, handlers: { ...version.handlers, ...replaced } } : version));

describe('each planted fault is reported by the right check', () => {
  it('a response missing a required field: response_schema_conformance', async () => {
    const getPet: typeof handlers.getPet = async (...args) => {
      const response = await handlers.getPet(...args);
      if (response.status !== 200) return response;
      const { name: _dropped, ...rest } = response.body;
      return { ...response, body: rest as typeof response.body };
    };
    const result = await fuzz(await serve({ handlers: { ...handlers, getPet } }));
    expectReported(result, 'response_schema_conformance', 'getPet');
  });

  it('a refused conditional write that changed the pet all the same: conditional_requests', async () => {
    const updatePet: typeof registries.v2.updatePet = async (request, context) => {
      const current = await context.pets.getVersioned(request.params.petId);
      if (current) await context.pets.update(request.params.petId, { name: 'overwritten' }, current.version);
      return registries.v2.updatePet(request, context);
    };
    const target = await serve({ versions: await withV2Handlers({ updatePet }) });
    const result = await fuzz({ baseUrl: `${target.origin}/v2`, key: target.key }, { specFile: V2_SPEC_FILE, operations: ['createPet', 'updatePet'] });
    expectReported(result, 'conditional_requests', 'getPet', /the ETag is unchanged/);
  });

  it('a read whose version changes on every read (no 304 ever): conditional_requests', async () => {
    let reads = 0;
    const getPet: typeof registries.v2.getPet = async (...args) => ({ ...(await registries.v2.getPet(...args)), etag: String(++reads) });
    const target = await serve({ versions: await withV2Handlers({ getPet }) });
    const result = await fuzz({ baseUrl: `${target.origin}/v2`, key: target.key }, { specFile: V2_SPEC_FILE, operations: ['createPet', 'getPet'] });
    expectReported(result, 'conditional_requests', 'getPet', /304/);
  });

  it('an extra property (additionalProperties: false): response_schema_conformance', async () => {
    const listPets: typeof handlers.listPets = async (...args) => {
      const response = await handlers.listPets(...args);
      return response.status === 200 ? { ...response, body: response.body.map((pet) => ({ ...pet, nickname: 'x' })) } : response;
    };
    const result = await fuzz(await serve({ handlers: { ...handlers, listPets } }));
    expectReported(result, 'response_schema_conformance', 'listPets');
  });

  it('a 500 on one enum value (listPets status=sold): not_a_server_error', async () => {
    const listPets: typeof handlers.listPets = async (...args) => {
      if (args[0].query.status === 'sold') throw new Error('planted fault');
      return handlers.listPets(...args);
    };
    const result = await fuzz(await serve({ handlers: { ...handlers, listPets } }));
    expectReported(result, 'not_a_server_error', 'listPets', /enum value "sold"/);
    const failure = result.cases.find((c) => c.label === 'query.status: enum value "sold"')!;
    expect(failure.curl).toMatch(/^curl -i -X GET 'http:\/\/127\.0\.0\.1:\d+\/v1\/pets\?status=sold' -H "Authorization: Bearer \$API_KEY"$/);
  });

  it('a dropped rate-limit header: response_headers_conformance', async () => {
    const dropHeader: RequestHandler = (_req, res, next) => {
      const writeHead = res.writeHead;
      res.writeHead = function (this: typeof res, ...args: Parameters<typeof writeHead>) {
        this.removeHeader('X-RateLimit-Remaining');
        return writeHead.apply(this, args);
      } as typeof writeHead;
      next();
    };
    const result = await fuzz(await serve({}, dropHeader), { operations: ['listPets'] });
    expectReported(result, 'response_headers_conformance', 'listPets');
  });

  it('a request bound not enforced (the validator sees maximum 1000, the contract says 100): negative_data_rejection', async () => {
    const looser = structuredClone(loadSpec());
    const limit = arrayAt(looser, 'paths', '/pets', 'get', 'parameters').find((p) => objectAt(p).name === 'limit');
    objectAt(limit, 'schema').maximum = 1000;
    const result = await fuzz(await serve({ contract: looser }), { operations: ['listPets'] });
    expectReported(result, 'negative_data_rejection', 'listPets', /query\.limit: above maximum 100/);
  });

  it('a created pet that cannot be read back: ensure_resource_availability', async () => {
    const getPet: typeof handlers.getPet = async (...args) => {
      const response = await handlers.getPet(...args);
      return response.status === 200 ? { ...response, body: { ...response.body, status: 'sold' as const } } : response;
    };
    const result = await fuzz(await serve({ handlers: { ...handlers, getPet } }), { operations: ['createPet'] });
    expectReported(result, 'ensure_resource_availability', 'getPet');
  });

  it('an undeclared method served (DELETE /pets answers 200): unsupported_method', async () => {
    const result = await fuzz(await serve({}, (req, res, next) => (req.method === 'DELETE' ? res.status(200).json([]) : next())), { operations: ['listPets'] });
    expectReported(result, 'unsupported_method', 'listPets', /^DELETE \/pets/);
  });

  it('a missing key accepted: ignored_auth', async () => {
    let plantedKey = '';
    const target = await serve({}, (req, _res, next) => {
      // The fault: a request without a key is served as if it carried one.
      req.headers.authorization ??= `Bearer ${plantedKey}`;
      next();
    });
    plantedKey = target.key;
    const result = await fuzz(target, { operations: ['listPets'] });
    expectReported(result, 'ignored_auth', 'listPets', /no credentials/);
  });
});

describe('respecting the server', () => {
  it('stops at a ban (429 key_temporarily_banned): exit 1, told to use a bigger key', async () => {
    const ban: RequestHandler = (_req, res) => {
      res.status(429).set({
        'Retry-After': '900',
        'X-RateLimit-Limit': '60',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '0',
        'RateLimit-Policy': '"minute";q=60;w=60',
        RateLimit: '"minute";r=0;t=900',
      });
      res.json({ code: 'key_temporarily_banned', message: 'planted ban', status: 429 });
    };
    const result = await fuzz(await serve({}, ban), { operations: ['listPets'], largerKey: 'npm run --silent keys -- create --plan enterprise' });
    expect(result.stoppedReason).toMatch(/banned.*--plan enterprise/);
    expect(result.notRun).toBeGreaterThan(0);
  });

  it('a request with no answer within the timeout is not_a_server_error', async () => {
    const hangOnPending: RequestHandler = (req, _res, next) => {
      if (req.query['status'] !== 'pending') next();
    };
    const result = await fuzz(await serve({}, hangOnPending), { operations: ['listPets'], requestTimeoutMs: 500 });
    const hung = result.cases.find((c) => c.label === 'query.status: enum value "pending"')!;
    expect(hung.failures).toEqual([{ check: 'not_a_server_error', expected: 'a response', got: 'no response within 500 ms' }]);
  });

  it('an item operation run alone (--operation getPet) finds real ids by listing the collection', async () => {
    const target = await serve();
    for (const name of ['Rex', 'Tom']) await t!.storage.pets.create({ name, categoryId: 1, status: 'available' });
    const result = await fuzz(target, { operations: ['getPet'] });
    expect(failures(result)).toEqual([]);
    // Without the listing, every case would use the schema's example id (1) and never meet pet 2.
    const readIds = result.cases.filter((c) => c.kind === 'positive' && c.status === 200).map((c) => c.request.url.split('/').at(-1));
    expect(new Set(readIds)).toEqual(new Set(['1', '2']));
  });

  it('honours 429 + Retry-After: waits and sends again, not a failure', async () => {
    let count = 0;
    let refusedAt = 0;
    let retriedAt = 0;
    const refuseOnce: RequestHandler = (_req, res, next) => {
      count++;
      if (count === 3) {
        refusedAt = Date.now();
        res.status(429).set({
          'X-Request-Id': 'planted-429',
          'Retry-After': '1',
          'X-RateLimit-Limit': '5',
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': '0',
          'RateLimit-Policy': '"minute";q=5;w=60',
          RateLimit: '"minute";r=0;t=1',
        });
        res.json({ code: 'rate_limited', message: 'planted 429', status: 429 });
        return;
      }
      if (count === 4) retriedAt = Date.now();
      next();
    };
    const result = await fuzz(await serve({}, refuseOnce), { operations: ['listPets'] });
    expect(failures(result)).toEqual([]);
    expect(result.rateLimitedWaits).toBe(1);
    expect(retriedAt - refusedAt).toBeGreaterThanOrEqual(950);
  });

  it('never sends more than --rate requests per second', async () => {
    const arrivals: number[] = [];
    const arrive: RequestHandler = (_req, _res, next) => {
      arrivals.push(Date.now());
      next();
    };
    const result = await fuzz(await serve({}, arrive), {
      operations: ['listPets'],
      rate: 10,
      maxExamples: 1,
    });
    expect(failures(result)).toEqual([]);
    expect(arrivals.length).toBeGreaterThan(11);
    // Any 11 consecutive arrivals span a second: starts are 100 ms apart; arrivals get up to 200 ms
    // of jitter on this noisy machine (unlimited, 11 requests take ~50 ms here).
    for (let i = 0; i + 10 < arrivals.length; i++) expect(arrivals[i + 10]! - arrivals[i]!).toBeGreaterThanOrEqual(800);
  });
});

describe('the CLI (npm run contract)', () => {
  const TSX = pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  const cli = (args: string[]): Promise<{ code: number; stdout: string }> =>
    promisify(execFile)(process.execPath, ['--import', TSX, path.join(PROJECT_ROOT, 'scripts/toolchain.ts'), 'contract', ...args], { cwd: PROJECT_ROOT }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );

  it('exits 0 on the healthy server, the summary line last', async () => {
    const { baseUrl, key } = await serve();
    const { code, stdout } = await cli(['--base-url', baseUrl, '--key', key, '--seed', String(SEED), '--max-examples', '2', '--rate', '1000']);
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
    expect(code).toBe(0);
    expect(stdout).not.toContain(key);
  });

  it('exits 1 on a fault, printing a curl command, what was expected and what came back', async () => {
    const listPets: typeof handlers.listPets = async (...args) => {
      if (args[0].query.status === 'sold') throw new Error('planted fault');
      return handlers.listPets(...args);
    };
    const { baseUrl, key } = await serve({ handlers: { ...handlers, listPets } });
    const { code, stdout } = await cli([
      '--base-url',
      baseUrl,
      '--key',
      key,
      '--seed',
      '7',
      '--max-examples',
      '1',
      '--rate',
      '1000',
      '--operation',
      'listPets',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAIL not_a_server_error: listPets \(positive\) query\.status: enum value "sold"\n {2}curl -i -X GET '[^']+\?status=sold' -H "Authorization: Bearer \$API_KEY"\n {2}expected: a status below 500\n {2}got: +500 \{"code":"internal_error"/,
    );
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^[1-9]\d* passed, [1-9]\d* failed$/);
    expect(stdout).not.toContain(key);
  });

  it('exits 2 on a usage error', async () => {
    const { code } = await cli(['--key', 'x']);
    expect(code).toBe(2);
  });

  it("--version v2 (or --spec openapi/v2/openapi.yaml) with the server's address fuzzes under /v2; a URL of another version is a usage error", async () => {
    const { origin, key } = await serve();
    for (const choice of [
      ['--version', 'v2'],
      ['--spec', 'openapi/v2/openapi.yaml'],
    ]) {
      const { code, stdout } = await cli([
        '--base-url',
        origin,
        ...choice,
        '--key',
        key,
        '--seed',
        String(SEED),
        '--max-examples',
        '1',
        '--rate',
        '1000',
        '--operation',
        'listPets',
      ]);
      expect(stdout.split('\n')[0]).toBe(`contract: ${origin}/v2 (openapi/v2/openapi.yaml), at most 1000 requests/s, time limit 300 s`);
      expect(stdout.trim().split('\n').at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
      expect(code).toBe(0);
    }
    const mismatch = await cli(['--base-url', `${origin}/v1`, '--version', 'v2', '--key', key]);
    expect(mismatch.code).toBe(2);
    const ambiguous = await cli(['--base-url', origin, '--key', key]);
    expect(ambiguous.code).toBe(2);
  });
});
