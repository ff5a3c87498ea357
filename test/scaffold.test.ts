/**
 * The designer's loop on a copy of the project, with the real scripts: for
 * each operation shape, add it to the copy's YAML (openapi/v1/openapi.yaml)
 * -> `npm run generate` -> `npm run typecheck` fails naming the missing
 * handler -> `npm run scaffold`. Then an operation added to v2 only
 * (openapi/v2/openapi.yaml): scaffold lists it in the v2 registry alone.
 * Then, with every shape added: `typecheck` and `check:generated` pass, the
 * copy's server answers each stub 501 `not_implemented` (after auth and
 * request validation: 401 without a key, 400 on a bad request), the v2-only
 * one under /v2 only, and under MOCK_RESPONSES=true a schema-valid example.
 *
 * One copy for all shapes keeps the suite to one `tsc` run per shape plus one.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { copyProject, runNpm } from './support/project-copy';
import { startServer, type RunningServer } from './support/processes';
import type { OpenApiDocument } from '@spec-first/engine';
import { schemaValidator, escapePointer } from '@spec-first/engine/testing';
import { loadSpec } from './support/contracts';
import { checkedFetch } from './support/http';

jest.setTimeout(240_000);

const errorResponse = { $ref: '#/components/responses/Error' };
const json = (schema: object, extra: object = {}) => ({ content: { 'application/json': { schema, ...extra } } });
const shelter = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 } } };
const petId = { name: 'petId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } };

interface Shape {
  what: string;
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  operation: Record<string, unknown>;
  /** A request the contract accepts: [url under /v1, body]. */
  valid: [string, unknown?];
  /** A request it refuses with 400. */
  bad: [string, unknown?];
  /** Under mock mode, the status answered for `valid`. */
  mockStatus: number;
  public?: boolean;
  /** The version whose document gets the operation (and the base path it is served under); v1 by default. */
  version?: 'v1' | 'v2';
}

const SHAPES: Shape[] = [
  {
    what: 'only a 2xx with a body',
    operationId: 'listShelters',
    method: 'get',
    path: '/shelters',
    operation: { responses: { '200': { description: 'Shelters.', ...json({ type: 'array', items: shelter }) } } },
    valid: ['/shelters'],
    bad: ['/shelters?unknown=1'],
    mockStatus: 200,
  },
  {
    what: 'a 204 with no body',
    operationId: 'deletePetPhoto',
    method: 'delete',
    path: '/pets/{petId}/photo',
    operation: { parameters: [petId], responses: { '204': { description: 'Deleted.' }, '401': { $ref: '#/components/responses/Unauthorized' } } },
    valid: ['/pets/1/photo'],
    bad: ['/pets/abc/photo'],
    mockStatus: 204,
  },
  {
    what: 'a POST with its own request schema (and its own example)',
    operationId: 'createAdoption',
    method: 'post',
    path: '/adoptions',
    operation: {
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          additionalProperties: false,
          required: ['petId', 'adopter'],
          properties: { petId: { $ref: '#/components/schemas/Id' }, adopter: { type: 'string', minLength: 1 } },
        }),
      },
      responses: {
        '201': {
          description: 'Adoption recorded.',
          ...json(
            { type: 'object', required: ['id', 'petId'], properties: { id: { type: 'integer' }, petId: { type: 'integer' } } },
            { example: { id: 7, petId: 3 } },
          ),
        },
      },
    },
    valid: ['/adoptions', { petId: 3, adopter: 'Ada' }],
    bad: ['/adoptions', { petId: 3 }],
    mockStatus: 201,
  },
  {
    what: 'a PATCH with its own request schema',
    operationId: 'updatePetNotes',
    method: 'patch',
    path: '/pets/{petId}/notes',
    operation: {
      parameters: [petId],
      requestBody: { required: true, ...json({ type: 'object', additionalProperties: false, properties: { notes: { type: 'string', maxLength: 500 } } }) },
      responses: { '200': { description: 'Updated notes.', ...json({ type: 'object', required: ['notes'], properties: { notes: { type: 'string' } } }) } },
    },
    valid: ['/pets/1/notes', { notes: 'likes walks' }],
    bad: ['/pets/1/notes', { notes: 42 }],
    mockStatus: 200,
  },
  {
    what: 'path and query parameters',
    operationId: 'listShelterPets',
    method: 'get',
    path: '/shelters/{shelterId}/pets',
    operation: {
      parameters: [
        { name: 'shelterId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 } },
        { name: 'sort', in: 'query', schema: { type: 'string', enum: ['name', 'id'] } },
      ],
      responses: {
        '200': { description: 'Pets of a shelter.', ...json({ $ref: '#/components/schemas/Pets' }) },
        '400': { $ref: '#/components/responses/BadRequest' },
      },
    },
    valid: ['/shelters/4/pets?limit=5&sort=name'],
    bad: ['/shelters/4/pets?limit=0'],
    mockStatus: 200,
  },
  {
    what: 'security: [] (no key)',
    operationId: 'getStatus',
    method: 'get',
    path: '/status',
    operation: {
      security: [],
      responses: { '200': { description: 'Service status.', ...json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }) } },
    },
    valid: ['/status'],
    bad: ['/status?verbose=1'],
    mockStatus: 200,
    public: true,
  },
  {
    what: 'several success statuses',
    operationId: 'putFavorite',
    method: 'put',
    path: '/favorites/{petId}',
    operation: {
      parameters: [petId],
      responses: {
        '201': { description: 'Favorite created.', ...json({ $ref: '#/components/schemas/Pet' }) },
        '200': { description: 'Already a favorite.', ...json({ $ref: '#/components/schemas/Pet' }) },
      },
    },
    valid: ['/favorites/2'],
    bad: ['/favorites/0'],
    mockStatus: 200,
  },
  {
    what: 'a default response only',
    operationId: 'listReports',
    method: 'get',
    path: '/reports',
    operation: { responses: { default: errorResponse } },
    valid: ['/reports'],
    bad: ['/reports?unknown=1'],
    mockStatus: 501, // nothing to mock: no 2xx is declared
  },
];

/** Added to openapi/v2/openapi.yaml only: served under /v2, not under /v1. */
const V2_ONLY: Shape = {
  what: 'an operation of v2 only',
  operationId: 'listFosterHomes',
  method: 'get',
  path: '/foster-homes',
  operation: {
    responses: { '200': { description: 'Foster homes.', ...json({ type: 'array', items: shelter }) }, '400': { $ref: '#/components/responses/BadRequest' } },
  },
  valid: ['/foster-homes'],
  bad: ['/foster-homes?unknown=1'],
  mockStatus: 200,
  version: 'v2',
};
const ALL_SHAPES = [...SHAPES, V2_ONLY];

let root: string;
/** The copy's documents, by version, once every shape is added. */
let specs: Record<'v1' | 'v2', OpenApiDocument>;

beforeAll(() => {
  root = copyProject();
});

/**
 * Shapes are added four at a time (tsc names at most four missing properties
 * in one message; `tsc` is the slow step): each batch goes generate ->
 * failing typecheck naming each of its operations -> scaffold.
 */
const BATCHES = [SHAPES.slice(0, 4), SHAPES.slice(4)];

describe.each(BATCHES.map((batch) => [batch.map((shape) => shape.what).join(', '), batch] as const))('new operations with %s', (_what, batch) => {
  it('generate -> typecheck fails naming each missing handler -> scaffold creates their stubs', () => {
    const specFile = path.join(root, 'openapi/v1/openapi.yaml');
    const document = parse(readFileSync(specFile, 'utf8')) as OpenApiDocument;
    for (const shape of batch) {
      document.paths[shape.path] = {
        ...document.paths[shape.path],
        [shape.method]: { operationId: shape.operationId, summary: shape.what, ...shape.operation },
      };
    }
    writeFileSync(specFile, stringify(document));

    expect(runNpm(root, 'generate')).toMatchObject({ status: 0 });
    const failing = runNpm(root, 'typecheck');
    expect(failing.status).not.toBe(0);
    expect(failing.output).toContain('src/service/handlers/index.ts');
    for (const shape of batch) expect(failing.output).toMatch(new RegExp(`missing the following properties[^\\n]*\\b${shape.operationId}\\b`));

    expect(runNpm(root, 'scaffold')).toMatchObject({ status: 0 });
    for (const shape of batch) expect(existsSync(path.join(root, `src/service/handlers/${shape.operationId}.ts`))).toBe(true);
  });
});

describe('a new operation in v2 only (openapi/v2/openapi.yaml)', () => {
  it('generate -> typecheck fails naming it in the v2 registry -> scaffold creates its stub, listed for v2 alone', () => {
    const specFile = path.join(root, 'openapi/v2/openapi.yaml');
    const document = parse(readFileSync(specFile, 'utf8')) as OpenApiDocument;
    document.paths[V2_ONLY.path] = { [V2_ONLY.method]: { operationId: V2_ONLY.operationId, summary: V2_ONLY.what, ...V2_ONLY.operation } };
    writeFileSync(specFile, stringify(document));

    expect(runNpm(root, 'generate')).toMatchObject({ status: 0 });
    const failing = runNpm(root, 'typecheck');
    expect(failing.status).not.toBe(0);
    expect(failing.output).toContain('src/service/handlers/index.ts');
    expect(failing.output).toMatch(/\blistFosterHomes\b[^\n]*HandlerRegistry<"v2">/);

    const scaffolded = runNpm(root, 'scaffold');
    expect(scaffolded).toMatchObject({ status: 0 });
    expect(scaffolded.output).toContain('created src/service/handlers/listFosterHomes.ts for v2 ');
    expect(readFileSync(path.join(root, 'src/service/handlers/listFosterHomes.ts'), 'utf8')).toContain(
      "export const listFosterHomes: Handler<'listFosterHomes', 'v2'> =",
    );
    const registry = readFileSync(path.join(root, 'src/service/handlers/index.ts'), 'utf8');
    const registryOf = (version: string): string => new RegExp(`export const ${version} = \\{\\n([^}]*)\\}`).exec(registry)![1]!;
    expect(registryOf('v2')).toContain('  listFosterHomes,\n');
    expect(registryOf('v1')).not.toContain('listFosterHomes');
    // The shapes added to v1 are v1's alone.
    for (const shape of SHAPES) expect([shape.operationId, registryOf('v2').includes(`  ${shape.operationId},`)]).toEqual([shape.operationId, false]);
  });
});

describe('with every shape scaffolded', () => {
  let server: RunningServer | undefined;
  let key: string;
  const databaseUrl = (): string => `sqlite:${path.join(root, 'data', 'pets.db')}`;
  /**
   * One request to the copy's server under the shape's version (or `version`), its answer checked
   * against the copy's contract of that version; `expect` lists the 5xx the test asks for.
   */
  const call = (
    base: string,
    shape: Shape,
    request: [string, unknown?],
    headers: Record<string, string> = {},
    expect: number[] = [],
    version = shape.version ?? 'v1',
  ) =>
    checkedFetch(
      `${base}/${version}${request[0]}`,
      {
        method: shape.method.toUpperCase(),
        headers: { ...(request[1] === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        ...(request[1] === undefined ? {} : { body: JSON.stringify(request[1]) }),
      },
      { contract: specs[version], expect },
    );

  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('npm run typecheck and npm run check:generated pass', () => {
    const typecheck = runNpm(root, 'typecheck');
    expect(typecheck.output).toBe('');
    expect(typecheck.status).toBe(0);
    expect(runNpm(root, 'check:generated')).toMatchObject({ status: 0 });
    specs = { v1: loadSpec(path.join(root, 'openapi/v1/openapi.yaml')), v2: loadSpec(path.join(root, 'openapi/v2/openapi.yaml')) };
  });

  it('the server answers each stub 501 not_implemented after auth and request validation', async () => {
    server = await startServer({ DATABASE_URL: databaseUrl(), CWD: root }, { projectRoot: root });
    key = /pas_[A-Za-z0-9_-]{43}/.exec(server.output())![0];
    const auth = { Authorization: `Bearer ${key}` };
    for (const shape of ALL_SHAPES) {
      const what = `${shape.version ?? 'v1'} ${shape.method.toUpperCase()} ${shape.valid[0]}`;
      const valid = await call(server.url, shape, shape.valid, shape.public ? {} : auth, [501]);
      expect([what, valid.status, valid.body]).toEqual([
        what,
        501,
        { code: 'not_implemented', message: `${shape.operationId} is declared in the contract but not implemented yet`, status: 501 },
      ]);
      expect(valid.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
      const bad = await call(server.url, shape, shape.bad, shape.public ? {} : auth);
      expect([what, bad.status, (bad.body as { code: string }).code]).toEqual([what, 400, 'invalid_request']);
      const anonymous = await call(server.url, shape, shape.valid, { Authorization: 'Bearer not-a-key' }, shape.public ? [501] : []);
      expect([what, anonymous.status]).toEqual([what, shape.public ? 501 : 401]);
    }
    // The v2-only operation is not served under /v1.
    const underV1 = await call(server.url, V2_ONLY, V2_ONLY.valid, auth, [], 'v1');
    expect([underV1.status, (underV1.body as { code: string }).code]).toEqual([404, 'not_found']);
  });

  it('under MOCK_RESPONSES=true each stub answers a schema-valid example of its lowest 2xx', async () => {
    server = await startServer({ DATABASE_URL: databaseUrl(), CWD: root, MOCK_RESPONSES: 'true' }, { projectRoot: root });
    expect(server.output()).toContain('mock mode');
    const validators = {
      v1: schemaValidator(specs.v1, { direction: 'response', allErrors: true }),
      v2: schemaValidator(specs.v2, { direction: 'response', allErrors: true }),
    };
    for (const shape of ALL_SHAPES) {
      const what = `${shape.version ?? 'v1'} ${shape.method.toUpperCase()} ${shape.valid[0]}`;
      const validator = validators[shape.version ?? 'v1'];
      const res = await call(server.url, shape, shape.valid, shape.public ? {} : { Authorization: `Bearer ${key}` }, [shape.mockStatus]);
      const { text } = res;
      expect([what, res.status]).toEqual([what, shape.mockStatus]);
      if (shape.mockStatus === 204) {
        expect(text).toBe('');
        continue;
      }
      const body = res.body as unknown;
      const pointer =
        shape.mockStatus === 501
          ? '/components/schemas/Error'
          : `/paths/${escapePointer(shape.path)}/${shape.method}/responses/${shape.mockStatus}/content/application~1json/schema`;
      expect([what, validator.explain(pointer, body)]).toEqual([what, undefined]);
      if (shape.operationId === 'createAdoption') expect(body).toEqual({ id: 7, petId: 3 }); // the YAML's own example
    }
    const favorite = SHAPES.find((shape) => shape.operationId === 'putFavorite')!;
    const created = await call(server.url, favorite, favorite.valid, { Authorization: `Bearer ${key}`, Prefer: 'code=201' });
    expect(created.status).toBe(201);
  });
});
