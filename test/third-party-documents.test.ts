/**
 * Documents written outside this project (test/fixtures/third-party/, their
 * sources and licences in its README), each dropped into a copy of the
 * project as `openapi/v3` the documented way (docs/designers-loop.md, "A new
 * major version"), and driven through the designer's loop with the real
 * scripts: `generate`, `typecheck` (fails: v3 has no handlers), `scaffold`,
 * `typecheck` passes, the real server starts; then, for every operation over
 * HTTP, with credentials presented as the document declares them (API keys
 * for bearer, basic and apiKey schemes; access tokens from a JWKS this test
 * serves for oauth2 and openIdConnect):
 *
 *   valid → 501 stub; no credentials → 401; wrong ones → 401; a token
 *   without the required scope → 403; invalid → 400; an undeclared media
 *   type → 415;
 *
 * then the mock server (`npm run mock`) answers every operation with a body
 * valid against its declared media type and schema (checked by an Ajv of
 * this test, not the server's), and `npm run contract -- --version v3`
 * passes against it.
 *
 * One document arrives split across files, as large teams keep them: the
 * Petstore, split by Redocly's own `redocly split` into paths/ and
 * components/ files joined by relative `$ref`s. Another arrives with a
 * documentation topic beside it, as publishers ship them: a root `x-topics`
 * extension whose content is a `$ref` to a Markdown file next to the
 * document, for renderers to read (the server must never open it).
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { copyProject, runNpm } from './support/project-copy';
import { startServer, type RunningServer } from './support/processes';
import { createKeyWithCli, isolatedServerEnv } from './support/server-env';
import { startTestIssuer, type TestIssuer } from './support/jwks';
import { PROJECT_ROOT } from './support/paths';
import {
  dereferencedDocument,
  isAnonymousAllowed,
  operationsOf,
  present,
  requirementsOf,
  schemaChecker,
  type Schema,
  send,
  servedMediaType,
  validRequest,
  type Document,
  type DocumentOperation,
} from './support/document-requests';

jest.setTimeout(300_000);

const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/third-party');
const WRONG_KEY = `pas_${'0'.repeat(43)}`;

interface ThirdPartyDocument {
  file: string;
  /** Split into files with `redocly split` before it is dropped in. */
  split?: boolean;
  /** Dropped in with a Markdown topic beside it, referenced from a root `x-topics` extension. */
  topics?: boolean;
  /** A typed client of v3, written as a designer would (src/client/v3.ts), and a program calling it, typechecked and run against the mock. */
  client?: { module: string; program: string };
  /** How many of its response examples its own schemas refuse: the mock warns of each at start and answers a valid sample instead. */
  invalidExamples?: number;
  /** What it brings that the others do not. */
  covers: string;
}

/** The typed client of a dropped-in version: the same three lines as src/client/v2.ts. */
const LIBRARY_CLIENT = `import type { paths } from '../../generated/v3/openapi';
import { operationTable, securitySchemes } from '../../generated/v3/operations';
import { createVersionClient, type PetAdoptionClientOptions } from '.';

export const createLibraryClient = (options: PetAdoptionClientOptions) => createVersionClient<paths>(options, { operationTable, securitySchemes });
`;

/**
 * Calls the QUERY and PURGE operations under their typed paths, and reads the JSON Lines export as items; prints
 * what came back. The compiler checks the bodies: a number where the QUERY body wants a title does not compile.
 */
const LIBRARY_CLIENT_PROGRAM = `import { createLibraryClient } from '../src/client/v3';
import { readItems } from '../src/client';

async function main(): Promise<void> {
  const client = createLibraryClient({ baseUrl: process.argv[2]!, apiKey: process.argv[3]!, retry: false });
  const found = await client.POST('/books (QUERY)', { body: { title: 'Dune' } });
  const purged = await client.POST('/books (PURGE)', {});
  const exported = await client.GET('/books/export', { parseAs: 'stream' });
  const books: Array<{ id: number; title: string }> = [];
  for await (const book of readItems<{ id: number; title: string }>(exported.response)) books.push(book);
  const titles: string[] | undefined = found.data?.map((book) => book.title);
  console.log(JSON.stringify({ found: found.response.status, titles, purged: purged.response.status, exported: exported.response.status, books }));
}

export function doesNotCompile(client: ReturnType<typeof createLibraryClient>) {
  // @ts-expect-error the QUERY body's title is a string
  return client.POST('/books (QUERY)', { body: { title: 42 } });
}

void main();
`;

const DOCUMENTS: ThirdPartyDocument[] = [
  {
    file: 'swagger-petstore-3.1.yaml',
    split: true,
    covers: 'OpenAPI 3.1, oauth2 scopes, apiKey header, form and octet-stream bodies, array query parameters, XML refused by name, external $refs',
  },
  {
    file: 'scalar-galaxy-3.1.yaml',
    covers: 'OpenAPI 3.1, every scheme (bearer, basic, apiKey in header, query and cookie, oauth2, openIdConnect), OR of requirements, multipart, webhooks',
  },
  {
    file: 'uspto-3.0.yaml',
    topics: true,
    covers:
      'OpenAPI 3.0, operationIds that are not identifiers (list-data-sets), a form body, anonymous access, a CSV-free JSON API with path parameters, a root x- extension with a $ref to a Markdown file',
  },
  { file: 'readme-file-uploads-3.0.yaml', covers: 'OpenAPI 3.0, image/png and multipart file uploads, no operationIds at all' },
  { file: 'readme-response-mediatypes-3.0.yaml', covers: 'OpenAPI 3.0, responses in text/plain and several media types, examples per media type' },
  {
    file: 'readme-request-examples-3.0.yaml',
    invalidExamples: 4,
    covers: 'OpenAPI 3.0, named examples of parameters and bodies in several media types, response examples its own schemas refuse',
  },
  {
    file: 'oai-path-item-query-additionalops.yaml',
    covers: 'OpenAPI 3.2, the QUERY method and an additional operation (COPY) beside GET on one path',
  },
  {
    file: 'oai-media-type-jsonl-ndjson.yaml',
    covers: 'OpenAPI 3.2, JSON Lines and NDJSON bodies described by itemSchema, through $refs to components.mediaTypes',
  },
  { file: 'learn-tags-example.yaml', covers: 'OpenAPI 3.2, tags with parent, kind and summary' },
  { file: 'redocly-sse-streaming.yaml', covers: 'OpenAPI 3.2, Server-Sent Events described by itemSchema' },
  {
    file: '../openapi-3.2/library-3.2.yaml',
    client: { module: LIBRARY_CLIENT, program: LIBRARY_CLIENT_PROGRAM },
    covers:
      'OpenAPI 3.2 written for this project: QUERY, additionalOperations, querystring (form and JSON), SSE, JSON Lines both ways, tags with parents, oauth2MetadataUrl, $self',
  },
  {
    file: 'readme-parameters-style-3.0.yaml',
    covers:
      'OpenAPI 3.0, every parameter style (form, spaceDelimited, pipeDelimited, deepObject, simple, label, matrix) in query, path, header and cookie, multipart encoding',
  },
];

let issuer: TestIssuer;
const TOKEN_ISSUER = 'https://issuer.test/';
const TOKEN_AUDIENCE = 'third-party-api';
/** The server verifies tokens of this issuer and audience (it refuses to start without both). */
const tokenSettings = () => ({ OAUTH2_JWKS_URL: issuer.jwksUrl, OAUTH2_ISSUER: TOKEN_ISSUER, OAUTH2_AUDIENCE: TOKEN_AUDIENCE });
beforeAll(async () => {
  issuer = await startTestIssuer();
});
afterAll(async () => {
  await issuer.close();
});

describe.each(DOCUMENTS)('$file', ({ file, split, topics, client, invalidExamples = 0 }) => {
  let root: string;
  let document: Document;
  let operations: DocumentOperation[];
  const env = isolatedServerEnv();
  let key: string;
  let servers: RunningServer[] = [];

  beforeAll(async () => {
    root = copyProject();
    const target = path.join(root, 'openapi/v3');
    mkdirSync(target, { recursive: true });
    if (split) {
      execFileSync(path.join(PROJECT_ROOT, 'node_modules/.bin/redocly'), ['split', path.join(FIXTURES, file), '--outDir', target], {
        cwd: root,
        stdio: 'pipe',
        // Under NODE_ENV=test (jest's), redocly split leaves the root document unwritten.
        env: { ...process.env, NODE_ENV: 'production' },
      });
      expect(readdirSync(target)).toEqual(expect.arrayContaining(['openapi.yaml', 'paths', 'components']));
    } else copyFileSync(path.join(FIXTURES, file), path.join(target, 'openapi.yaml'));
    if (topics) {
      // As documentation publishers ship topics: a root extension pointing at Markdown beside the document.
      mkdirSync(path.join(target, 'topics'));
      writeFileSync(path.join(target, 'topics/introduction.md'), '# Introduction\n\nHow to search the data sets.\n');
      appendFileSync(path.join(target, 'openapi.yaml'), '\nx-topics:\n  - title: Introduction\n    content:\n      $ref: ./topics/introduction.md\n');
    }
    if (client) {
      // Typechecked with the rest once generated and scaffolded.
      writeFileSync(path.join(root, 'src/client/v3.ts'), client.module);
      writeFileSync(path.join(root, 'scripts/v3-client-program.ts'), client.program);
    }
    document = await dereferencedDocument(path.join(FIXTURES, file));
    operations = operationsOf(document);
    // Limits no run of this suite meets (the fuzzer's requests included).
    key = createKeyWithCli(env, '--plan', 'enterprise', '--rpm', '100000', '--rpd', '10000000', '--label', 'third-party');
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    servers = [];
  });

  test('generate, typecheck names the version without handlers, scaffold, typecheck passes', () => {
    const generated = runNpm(root, 'generate');
    expect(generated).toMatchObject({ status: 0 });
    const missing = runNpm(root, 'typecheck');
    expect(missing.status).not.toBe(0);
    expect(missing.output).toMatch(/Property 'v3' is missing/);
    const scaffolded = runNpm(root, 'scaffold');
    expect(scaffolded).toMatchObject({ status: 0 });
    expect(scaffolded.output).toMatch(/v3 \(\d+\)/);
    const checked = runNpm(root, 'typecheck');
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
    expect(runNpm(root, 'check:generated')).toMatchObject({ status: 0 });
  });

  test('every operation: valid → 501, no or wrong credentials → 401, missing scope → 403, invalid → 400, undeclared media type → 415', async () => {
    const server = await startServer({ ...env, ...tokenSettings(), OAUTH2_PLAN: 'business' }, { projectRoot: root });
    servers.push(server);
    const base = `${server.url}/v3`;
    const token = await issuer.sign({ sub: 'designer', iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, scope: allScopes(document).join(' ') });
    const problems: string[] = [];
    const expectStatus = async (
      what: string,
      op: DocumentOperation,
      request: ReturnType<typeof validRequest>,
      status: number,
      check?: (response: Awaited<ReturnType<typeof send>>) => string | undefined,
    ): Promise<void> => {
      const response = await send(request);
      const body = response.headers.get('content-type')?.startsWith('application/json') ? safeJson(response.text) : undefined;
      if (response.status !== status)
        problems.push(`${op.name} ${what}: ${request.method} ${request.url} → ${response.status} ${response.text.slice(0, 200)} (expected ${status})`);
      else if (!isErrorObject(body, status)) problems.push(`${op.name} ${what}: the ${status} is not an Error object: ${response.text.slice(0, 200)}`);
      else {
        const complaint = check?.(response);
        if (complaint) problems.push(`${op.name} ${what}: ${complaint}`);
      }
    };

    for (const op of operations) {
      const requirements = requirementsOf(document, op);
      await expectStatus('valid', op, validRequest(document, base, op, { apiKey: key, token }), 501);
      if (!isAnonymousAllowed(requirements)) {
        const challenges = (response: Awaited<ReturnType<typeof send>>): string | undefined =>
          response.headers.get('www-authenticate') ? undefined : 'no WWW-Authenticate challenge';
        await expectStatus('without credentials', op, validRequest(document, base, op, undefined), 401, challenges);
        const wrong = validRequest(document, base, op, { apiKey: WRONG_KEY, token: `${token.slice(0, -4)}AAAA` });
        await expectStatus('with wrong credentials', op, wrong, 401, challenges);
        // 403 when the only ways in are scoped tokens (an API key or an unscoped requirement would let the caller in).
        const scoped = requirements.every((requirement) =>
          Object.entries(requirement).some(([name, scopes]) => isTokenScheme(document, name) && scopes.length > 0),
        );
        if (scoped) {
          const unscoped = await issuer.sign({ sub: 'designer', iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, scope: '' });
          const request = validRequest(document, base, op, undefined);
          const presented = { headers: request.headers, query: [] as string[], cookies: [] as string[] };
          if (requirements.some((requirement) => present(document, requirement, { token: unscoped }, presented))) {
            await expectStatus('with a token lacking the scope', op, request, 403, (response) =>
              /^Bearer error="insufficient_scope", scope="[^"]+"$/.test(response.headers.get('www-authenticate') ?? '')
                ? undefined
                : `WWW-Authenticate is ${response.headers.get('www-authenticate')}`,
            );
          }
        }
      }
      await expectStatus(
        'with an undeclared query parameter',
        op,
        validRequest(document, base, op, { apiKey: key, token }, ['not_declared_by_the_document=1']),
        400,
      );
      const declared = Object.keys(op.operation['requestBody']?.['content'] ?? {});
      if (declared.length > 0) {
        const request = validRequest(document, base, op, { apiKey: key, token });
        request.headers['content-type'] = 'application/x-not-declared';
        request.body = 'x';
        await expectStatus('with an undeclared media type', op, request, 415);
        const json = declared.find((mediaType) => /json/.test(mediaType));
        const schema = json ? op.operation['requestBody']!['content']![json]!['schema'] : undefined;
        if (json && schema && (schema['type'] === 'object' || schema['properties'])) {
          const invalid = validRequest(document, base, op, { apiKey: key, token });
          invalid.headers['content-type'] = 'application/json';
          invalid.body = '"a string where the document wants an object"';
          await expectStatus('with a body of the wrong type', op, invalid, 400);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('npm run mock answers every operation with a body valid against its declared media type and schema; npm run contract -- --version v3 passes against it', async () => {
    // The fuzzer's requests without valid credentials count per IP: a window it never meets, so it never waits out a 429.
    const mock = await startServer(
      { ...env, MOCK_RESPONSES: 'true', ...tokenSettings(), OAUTH2_PLAN: 'business', RATE_LIMIT_IP_PER_MINUTE: '100000' },
      { projectRoot: root },
    );
    servers.push(mock);
    // A document with examples its schemas refuse is still served: one warning per example at start, each replaced by a valid sample.
    expect(mock.output().match(/a sample generated from the schema is sent instead, marked X-Mock-Replaced-Example/g) ?? []).toHaveLength(invalidExamples);
    expect(mock.output()).not.toContain('X-Mock-Invalid-Example');
    const token = await issuer.sign({ sub: 'designer', iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, scope: allScopes(document).join(' ') });
    const check = schemaChecker(document);
    const problems: string[] = [];
    for (const op of operations) {
      const request = validRequest(document, `${mock.url}/v3`, op, { apiKey: key, token });
      const response = await send(request);
      if (!Object.keys(op.operation['responses'] ?? {}).some((status) => /^[23]..$/i.test(status))) {
        // Nothing successful to mock (only errors, or only `default`, which this project reads as errors): the stub's 501,
        // until Prefer: code= picks a declared status.
        if (response.status !== 501 || !isErrorObject(safeJson(response.text), 501))
          problems.push(`${op.name}: declares no success, answered ${response.status} ${response.text.slice(0, 100)}`);
        continue;
      }
      const declared =
        op.operation['responses']?.[String(response.status)] ??
        op.operation['responses']?.[`${String(response.status)[0]}XX`] ??
        op.operation['responses']?.['default'];
      if (!declared || response.status >= 400) {
        problems.push(`${op.name}: ${request.method} ${request.url} → ${response.status} ${response.text.slice(0, 200)}`);
        continue;
      }
      const content = Object.entries(declared['content'] ?? {}).filter(([mediaType]) => servedMediaType(mediaType));
      if (content.length === 0) {
        if (response.bytes.length > 0) problems.push(`${op.name}: ${response.status} declares no body, got ${response.text.slice(0, 100)}`);
        continue;
      }
      const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const media = content.find(([mediaType]) => matches(mediaType, contentType));
      if (!media) {
        problems.push(`${op.name}: Content-Type ${contentType} is not one of ${content.map(([m]) => m).join(', ')}`);
        continue;
      }
      // The bundler dereferences what 3.1 knows: in a 3.2 QUERY operation or an itemSchema, a $ref may remain.
      const schema = inPlace(document, media[1]['schema']);
      const itemSchema = inPlace(
        document,
        ((media[1] as { itemSchema?: Schema })['itemSchema'] ?? (schema?.['type'] === 'array' ? schema['items'] : undefined)) as Schema | undefined,
      );
      if (/^application\/(jsonl|x-ndjson|json-seq)$/.test(contentType)) {
        // A stream of JSON items (JSON Lines, JSON text sequences): every item read and checked against its item schema.
        const records = contentType === 'application/json-seq' ? response.text.split('\u001e').slice(1) : response.text.split('\n').filter(Boolean);
        for (const [index, record] of records.entries()) {
          const item = safeJson(record);
          const complaint = item === undefined ? 'not JSON' : itemSchema && check(itemSchema, item);
          if (complaint) problems.push(`${op.name}: item ${index} of the ${contentType} stream ${record.slice(0, 100)} is invalid: ${complaint}`);
        }
      } else if (contentType === 'text/event-stream') {
        // Server-Sent Events: each event's data, as JSON when the item schema describes the data rather than the event's fields.
        const fields = Object.keys((itemSchema as { properties?: object } | undefined)?.properties ?? {});
        const ofFields = fields.length > 0 && fields.every((field) => ['data', 'event', 'id', 'retry'].includes(field));
        for (const block of response.text.split('\n\n').filter((text) => text.trim() !== '' && !text.startsWith(':'))) {
          const event: Record<string, unknown> = {};
          for (const line of block.split('\n')) {
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'data') event['data'] = event['data'] === undefined ? value : `${event['data']}\n${value}`;
            else if (field === 'event' || field === 'id') event[field] = value;
          }
          const item = ofFields ? event : (safeJson(String(event['data'])) ?? event['data']);
          const complaint = itemSchema && check(itemSchema, item);
          if (complaint) problems.push(`${op.name}: an event of the stream ${block.slice(0, 100)} is invalid: ${complaint}`);
        }
      } else if (/json/.test(contentType)) {
        const parsed = safeJson(response.text);
        const complaint = schema && check(schema, parsed);
        if (parsed === undefined || complaint)
          problems.push(`${op.name}: the ${contentType} body ${response.text.slice(0, 100)} is invalid: ${complaint ?? 'not JSON'}`);
      } else if (contentType.startsWith('text/')) {
        if (schema && schema['type'] === 'string' && check(schema, response.text))
          problems.push(`${op.name}: the text body is invalid: ${check(schema, response.text)}`);
      } else if (response.bytes.length === 0) problems.push(`${op.name}: the ${contentType} body is empty`);
    }
    expect(problems).toEqual([]);

    // Not spawnSync: this process serves the JWKS the server fetches while the fuzzer runs.
    const fuzzed = await run('npm', ['run', '--silent', 'contract', '--', '--version', 'v3', '--base-url', mock.url, '--max-examples', '5', '--rate', '15'], {
      cwd: root,
      // Credentials through the environment, as CI passes them (out of process lists); at most 15 requests a second,
      // within the token callers' plan (OAUTH2_PLAN=business).
      env: { ...process.env, CONTRACT_API_KEY: key, CONTRACT_ACCESS_TOKEN: token },
    });
    // Each failure with what was expected and what came back, then the summary line last.
    expect(fuzzed.stdout.split('\n').filter((line) => /^FAIL|^ {2}(curl|expected|got)/.test(line))).toEqual([]);
    expect(fuzzed.stdout.trim().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(fuzzed.stderr).toBe('');
    expect(fuzzed.status).toBe(0);

    if (client) {
      // The typed client: QUERY and PURGE called under their typed paths arrive with their own methods (POST /books would be a 405).
      const called = await run(path.join(PROJECT_ROOT, 'node_modules/.bin/node'), ['--import', 'tsx', 'scripts/v3-client-program.ts', `${mock.url}/v3`, key], {
        cwd: root,
        env: process.env,
      });
      expect(called).toMatchObject({ status: 0, stderr: '' });
      expect(JSON.parse(called.stdout)).toEqual({
        found: 200,
        titles: expect.any(Array),
        purged: 204,
        exported: 200,
        books: [
          { id: 1, title: 'Dune' },
          { id: 2, title: 'Emma' },
        ],
      });
      expect(mock.output()).toMatch(/"method":"QUERY"/);
    }
  });
});

/** A schema with its local `$ref`s (at any depth) replaced by what they point at. */
function inPlace(document: Document, schema: Schema | undefined, depth = 0): Schema | undefined {
  if (schema === undefined || schema === null || typeof schema !== 'object' || depth > 20) return schema;
  if (Array.isArray(schema)) return schema.map((item) => inPlace(document, item, depth + 1)) as unknown as Schema;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let node: unknown = document;
    for (const segment of ref.slice(2).split('/')) node = (node as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
    return inPlace(document, node as Schema, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inPlace(document, value as Schema, depth + 1)])) as Schema;
}

/** Runs a command to its end without blocking this process; its status and output. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Every scope an oauth2 scheme of the document declares. */
function allScopes(document: Document): string[] {
  const schemes = Object.values(document['components']?.['securitySchemes'] ?? {});
  return [...new Set(schemes.flatMap((scheme) => Object.values(scheme['flows'] ?? {}).flatMap((flow) => Object.keys(flow['scopes'] ?? {}))))];
}

const isTokenScheme = (document: Document, name: string): boolean => {
  const type = document['components']?.['securitySchemes']?.[name]?.['type'];
  return type === 'oauth2' || type === 'openIdConnect';
};

function isErrorObject(body: unknown, status: number): boolean {
  if (status < 400) return true;
  const error = body as { code?: unknown; message?: unknown; status?: unknown } | undefined;
  return typeof error?.code === 'string' && typeof error.message === 'string' && error.status === status;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether a declared media type (maybe a range like image/*) covers the one received. */
function matches(declared: string, received: string): boolean {
  const [type, subtype] = declared.split(';')[0]!.trim().toLowerCase().split('/');
  const [rtype, rsubtype] = received.toLowerCase().split('/');
  return (type === '*' || type === rtype) && (subtype === '*' || subtype === rsubtype);
}
