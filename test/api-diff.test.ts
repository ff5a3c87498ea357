/**
 * The breaking-change gate (`npm run api:diff`) and the release record
 * (`npm run api:release`). The table applies each edit to a temp copy of the
 * contract and runs the command's own entry (`runApiDiff`, in-process, so the
 * table stays fast); a few tests spawn the real CLI. Every row also says
 * whether api-smart-diff alone (`--library-only`) gets it right, so the rows
 * that need a project rule are the ones marked `wrong`, and a library upgrade
 * that changes its answer shows up here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { runApiDiff } from '@spec-first/toolchain';
import { runApiRelease } from '@spec-first/toolchain';
import { arrayAt, objectAt } from './support/document-edits';
import { PROJECT_ROOT, tempDir } from './support/paths';

type Doc = Record<string, unknown>; // a parsed OpenAPI document, edited through objectAt and arrayAt

/** The v1 contract as the fixture, its info.version pinned to 1.0.0 so that the rows do not move with each release of v1. */
const CONTRACT_TEXT = readFileSync(path.join(PROJECT_ROOT, 'openapi', 'v1', 'openapi.yaml'), 'utf8').replace(/^( {2}version: ).*$/m, '$11.0.0');
const CONTRACT: Doc = parse(CONTRACT_TEXT);
const contract = (): Doc => structuredClone(CONTRACT);

interface EditCase {
  name: string;
  /** The edit a designer makes (on a copy of the contract, or of `base` when given). */
  edit: (doc: Doc) => void;
  /** Changes the base first, for edits that need a starting point the contract lacks. */
  base?: (doc: Doc) => void;
  exit: 0 | 1;
  /** Lines that must be printed (prefixes: class, location, change). */
  lines: string[];
  /** Line prefixes that must not be printed. */
  absent?: string[];
  /** Does api-smart-diff 1.0.6 alone print the same lines and exit code? */
  library: 'right' | 'wrong';
}

/** `/pets`, or the node at `keys` under it. */
const pets = (doc: Doc, ...keys: string[]) => objectAt(doc, 'paths', '/pets', ...keys);
/** listPets' `limit` parameter, or the node at `keys` under it. */
const limit = (doc: Doc, ...keys: string[]) => objectAt(doc, 'paths', '/pets', 'get', 'parameters', 0, ...keys);
/** `components.schemas`, or the node at `keys` under it. */
const schemas = (doc: Doc, ...keys: string[]) => objectAt(doc, 'components', 'schemas', ...keys);
const BODY = 'paths./pets.post.requestBody.content.application/json.schema';
const GET_PET_200 = 'paths./pets/{petId}.get.responses.200.content.application/json.schema';
const LIST_200 = 'paths./pets.get.responses.200.content.application/json.schema';

const TABLE: EditCase[] = [
  // Breaking: removals
  { name: 'removed operation', edit: (d) => delete pets(d).post, exit: 1, lines: ['BREAKING paths./pets.post: removed'], library: 'right' },
  {
    name: 'removed path',
    edit: (d) => delete objectAt(d, 'paths')['/store/orders'],
    exit: 1,
    lines: ['BREAKING paths./store/orders.get: removed'],
    library: 'right',
  },
  {
    name: 'removed response status',
    edit: (d) => delete objectAt(d, 'paths', '/pets/{petId}', 'get', 'responses')['404'],
    exit: 1,
    lines: ['BREAKING paths./pets/{petId}.get.responses.404: removed'],
    library: 'right',
  },
  // Breaking: requests narrowed
  {
    name: 'new required request field',
    edit: (d) => {
      schemas(d, 'NewPet', 'properties').breed = { type: 'string' };
      arrayAt(schemas(d, 'NewPet'), 'required').push('breed');
    },
    exit: 1,
    lines: [`BREAKING ${BODY}.required: added "breed"`],
    library: 'right',
  },
  {
    name: 'new required query parameter',
    edit: (d) => arrayAt(pets(d, 'get'), 'parameters').push({ name: 'sort', in: 'query', required: true, schema: { type: 'string' } }),
    exit: 1,
    lines: ['BREAKING paths./pets.get.parameters.sort: added'],
    library: 'right',
  },
  {
    name: 'optional parameter made required',
    edit: (d) => (limit(d).required = true),
    exit: 1,
    lines: ['BREAKING paths./pets.get.parameters.limit.required: added true'],
    library: 'right',
  },
  {
    name: 'narrowed request type (number -> integer)',
    base: (d) => (limit(d, 'schema').type = 'number'),
    edit: (d) => (limit(d, 'schema').type = 'integer'),
    exit: 1,
    lines: ['BREAKING paths./pets.get.parameters.limit.schema.type: "number" → "integer" (requests that were valid are now refused)'],
    library: 'wrong',
  },
  {
    name: 'narrowed enum (request breaks, response does not)',
    edit: (d) => (schemas(d, 'PetStatus').enum = ['available', 'pending']),
    exit: 1,
    lines: [
      'BREAKING paths./pets.get.parameters.status.schema.enum: removed "sold"',
      `BREAKING ${BODY}.properties.status.enum: removed "sold"`,
      `NON-BREAKING ${GET_PET_200}.properties.status.enum: removed "sold"`,
    ],
    library: 'right',
  },
  {
    name: 'lowered maximum on a request',
    edit: (d) => (limit(d, 'schema').maximum = 50),
    exit: 1,
    lines: ['BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50 (requests that were valid are now refused)'],
    library: 'right',
  },
  {
    name: 'raised minimum on a request',
    edit: (d) => (limit(d, 'schema').minimum = 5),
    exit: 1,
    lines: ['BREAKING paths./pets.get.parameters.limit.schema.minimum: 1 → 5'],
    library: 'right',
  },
  {
    name: 'lowered maxLength on a request',
    edit: (d) => (schemas(d, 'NewPet', 'properties', 'name').maxLength = 100),
    exit: 1,
    lines: [`BREAKING ${BODY}.properties.name.maxLength: 200 → 100`],
    library: 'right',
  },
  {
    name: 'pattern narrowed on a request',
    edit: (d) => (schemas(d, 'NewPet', 'properties', 'name').pattern = '^[A-Z]'),
    exit: 1,
    lines: [`BREAKING ${BODY}.properties.name.pattern: ${JSON.stringify(schemas(CONTRACT, 'NewPet', 'properties', 'name').pattern)} → "^[A-Z]"`],
    library: 'right',
  },
  {
    name: 'field removed from a request object without additional properties',
    edit: (d) => delete schemas(d, 'NewPet', 'properties').status,
    exit: 1,
    lines: [`BREAKING ${BODY}.properties.status: removed`],
    library: 'wrong',
  },
  {
    name: 'request object closed (additionalProperties: false added)',
    base: (d) => delete schemas(d, 'NewPet').additionalProperties,
    edit: (d) => (schemas(d, 'NewPet').additionalProperties = false),
    exit: 1,
    lines: [`BREAKING ${BODY}.additionalProperties: added false`],
    library: 'wrong',
  },
  {
    name: 'required request body added',
    base: (d) => delete pets(d, 'post').requestBody,
    edit: (d) => (pets(d, 'post').requestBody = { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } } }),
    exit: 1,
    lines: ['BREAKING paths./pets.post.requestBody: added'],
    library: 'wrong',
  },
  // Breaking: responses widened or thinned
  {
    name: 'removed response field',
    edit: (d) => {
      delete schemas(d, 'Pet', 'properties').categoryId;
      schemas(d, 'Pet').required = ['id', 'name', 'status'];
    },
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.categoryId: removed`, `BREAKING ${LIST_200}.items.required: removed "categoryId"`],
    library: 'right',
  },
  {
    name: 'response field made optional',
    edit: (d) => (schemas(d, 'Pet').required = ['id', 'name', 'categoryId']),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.required: removed "status"`],
    library: 'right',
  },
  {
    name: 'widened enum (response breaks, request does not)',
    edit: (d) => arrayAt(schemas(d, 'PetStatus'), 'enum').push('adopted'),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.status.enum: added "adopted"`, 'NON-BREAKING paths./pets.get.parameters.status.schema.enum: added "adopted"'],
    library: 'right',
  },
  {
    name: 'new field in a response object without additional properties',
    edit: (d) => (schemas(d, 'Pet', 'properties').breed = { type: 'string' }),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.breed: added`, `BREAKING ${LIST_200}.items.properties.breed: added`],
    library: 'wrong',
  },
  {
    name: 'widened response type (nullable)',
    edit: (d) => (schemas(d, 'Pet', 'properties', 'name').type = ['string', 'null']),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.name.type: "string" → ["string","null"] (clients may now receive values they do not expect)`],
    library: 'wrong',
  },
  {
    name: 'changed response field type',
    edit: (d) => (schemas(d, 'Pet', 'properties', 'name').type = 'integer'),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.name.type: "string" → "integer"`],
    library: 'wrong',
  },
  {
    name: 'lowered minimum on a response',
    edit: (d) => (schemas(d, 'Error', 'properties', 'status').minimum = 100),
    exit: 1,
    lines: ['BREAKING paths./pets/{petId}.get.responses.404.content.application/json.schema.properties.status.minimum: 400 → 100'],
    library: 'wrong',
  },
  {
    name: 'changed $ref target with a different shape',
    edit: (d) =>
      (objectAt(d, 'paths', '/pets/{petId}', 'get', 'responses', '200', 'content', 'application/json').schema = { $ref: '#/components/schemas/Error' }),
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.properties.id: removed`],
    library: 'right',
  },
  {
    name: 'response object opened (additionalProperties: false removed)',
    edit: (d) => delete schemas(d, 'Pet').additionalProperties,
    exit: 1,
    lines: [`BREAKING ${GET_PET_200}.additionalProperties: removed false`],
    library: 'right',
  },
  // Breaking: security added
  {
    name: "security added (an operation's security: [] removed, so it inherits bearerAuth)",
    base: (d) => (objectAt(d, 'paths', '/store/orders', 'get').security = []),
    edit: (d) => delete objectAt(d, 'paths', '/store/orders', 'get').security,
    exit: 1,
    lines: ['BREAKING paths./store/orders.get.security: [] → [{"bearerAuth":[]}]'],
    library: 'wrong',
  },
  {
    name: 'security added (a second scheme required with the first)',
    edit: (d) => {
      objectAt(d, 'components', 'securitySchemes').apiKey = { type: 'apiKey', in: 'header', name: 'X-Api-Key' };
      d.security = [{ bearerAuth: [], apiKey: [] }];
    },
    exit: 1,
    lines: [
      'BREAKING paths./pets.get.security: [{"bearerAuth":[]}] → [{"bearerAuth":[],"apiKey":[]}]',
      'NON-BREAKING components.securitySchemes.apiKey: added',
    ],
    library: 'wrong',
  },
  // Non-breaking
  {
    name: 'new operation',
    edit: (d) =>
      (objectAt(d, 'paths', '/pets/{petId}').delete = {
        operationId: 'deletePet',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        responses: { '204': { description: 'Deleted.' } },
      }),
    exit: 0,
    lines: ['NON-BREAKING paths./pets/{petId}.delete: added (a new operation)'],
    library: 'right',
  },
  {
    name: 'new path',
    edit: (d) => (objectAt(d, 'paths')['/categories'] = { get: { operationId: 'listCategories', responses: { '200': { description: 'The categories.' } } } }),
    exit: 0,
    lines: ['NON-BREAKING paths./categories.get: added'],
    library: 'right',
  },
  {
    name: 'new optional request field',
    edit: (d) => (schemas(d, 'NewPet', 'properties').breed = { type: 'string' }),
    exit: 0,
    lines: [`NON-BREAKING ${BODY}.properties.breed: added`],
    library: 'right',
  },
  {
    name: 'new optional query parameter',
    edit: (d) => arrayAt(pets(d, 'get'), 'parameters').push({ name: 'sort', in: 'query', schema: { type: 'string' } }),
    exit: 0,
    lines: ['NON-BREAKING paths./pets.get.parameters.sort: added'],
    library: 'right',
  },
  {
    name: 'widened request bound',
    edit: (d) => (limit(d, 'schema').maximum = 200),
    exit: 0,
    lines: ['NON-BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 200 (requests that were valid stay valid)'],
    library: 'right',
  },
  {
    name: 'widened request type (integer -> number)',
    edit: (d) => (limit(d, 'schema').type = 'number'),
    exit: 0,
    lines: ['NON-BREAKING paths./pets.get.parameters.limit.schema.type: "integer" → "number"'],
    library: 'right',
  },
  {
    name: 'new response field where the schema allowed any',
    base: (d) => delete schemas(d, 'Pet').additionalProperties,
    edit: (d) => (schemas(d, 'Pet', 'properties').breed = { type: 'string' }),
    exit: 0,
    lines: [`NON-BREAKING ${GET_PET_200}.properties.breed: added`],
    library: 'right',
  },
  {
    name: 'narrowed response bound',
    base: (d) => (schemas(d, 'Pets').maxItems = 100),
    edit: (d) => (schemas(d, 'Pets').maxItems = 10),
    exit: 0,
    lines: [`NON-BREAKING ${LIST_200}.maxItems: 100 → 10`],
    library: 'right',
  },
  {
    name: 'security removed (security: [] on one operation)',
    edit: (d) => (objectAt(d, 'paths', '/store/orders', 'get').security = []),
    exit: 0,
    lines: ['NON-BREAKING paths./store/orders.get.security: [{"bearerAuth":[]}] → []'],
    library: 'wrong',
  },
  {
    name: 'type written as a list of the same type',
    edit: (d) => (limit(d, 'schema').type = ['integer']),
    exit: 0,
    lines: ['ANNOTATION paths./pets.get.parameters.limit.schema.type: "integer" → ["integer"] (the same types, written differently)'],
    library: 'wrong',
  },
  {
    name: 'new response status',
    edit: (d) => (objectAt(d, 'paths', '/pets/{petId}', 'get', 'responses')['410'] = { $ref: '#/components/responses/NotFound' }),
    exit: 0,
    lines: ['NON-BREAKING paths./pets/{petId}.get.responses.410: added'],
    library: 'right',
  },
  {
    name: 'operation deprecated',
    edit: (d) => (pets(d, 'post').deprecated = true),
    exit: 0,
    lines: ['NON-BREAKING paths./pets.post.deprecated: added true'],
    library: 'right',
  },
  {
    name: '$ref target changed to one of the same shape (nothing for clients)',
    edit: (d) => {
      schemas(d).Animal = structuredClone(schemas(d, 'Pet'));
      objectAt(d, 'paths', '/pets/{petId}', 'get', 'responses', '200', 'content', 'application/json').schema = { $ref: '#/components/schemas/Animal' };
    },
    exit: 0,
    lines: [],
    absent: ['BREAKING', 'NON-BREAKING', 'ANNOTATION'],
    library: 'right',
  },
  // Annotations, and components reported once where they are used
  {
    name: 'description changed',
    edit: (d) => (pets(d, 'get').description = 'Lists the animals.'),
    exit: 0,
    lines: ['ANNOTATION paths./pets.get.description: '],
    library: 'right',
  },
  {
    name: 'components description: reported where used, not under components/',
    edit: (d) => (schemas(d, 'Id').description = 'An identifier.'),
    exit: 0,
    lines: ['ANNOTATION paths./pets/{petId}.get.parameters.petId.schema.description: ', `ANNOTATION ${GET_PET_200}.properties.id.description: `],
    absent: ['ANNOTATION components.'],
    library: 'right',
  },
  {
    name: 'components bound: breaking on the requests that use it, once each, not under components/',
    edit: (d) => (schemas(d, 'Id').minimum = 2),
    exit: 1,
    lines: [
      'BREAKING paths./pets/{petId}.get.parameters.petId.schema.minimum: 1 → 2',
      `BREAKING ${BODY}.properties.categoryId.minimum: 1 → 2`,
      `NON-BREAKING ${GET_PET_200}.properties.id.minimum: 1 → 2`,
    ],
    absent: ['BREAKING components.', 'NON-BREAKING components.'],
    library: 'right',
  },
  // The version gate
  {
    name: 'breaking change announced by a major bump',
    edit: (d) => {
      limit(d, 'schema').maximum = 50;
      objectAt(d, 'info').version = '2.0.0';
    },
    exit: 0,
    lines: [
      'BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50',
      'OK: 1 breaking change, announced by a major version bump (info.version 1.0.0 → 2.0.0)',
    ],
    library: 'right',
  },
  {
    name: 'breaking change with only a minor bump',
    edit: (d) => {
      limit(d, 'schema').maximum = 50;
      objectAt(d, 'info').version = '1.1.0';
    },
    exit: 1,
    lines: [
      'BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50',
      'FAIL: 1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major: set info.version to 2.0.0',
    ],
    library: 'right',
  },
];

/** Writes the base as the only release and the edited contract next to it; returns the contract's path. */
function writeCase(testCase: EditCase): string {
  const dir = tempDir();
  const base = contract();
  testCase.base?.(base);
  const head = structuredClone(base);
  testCase.edit(head);
  mkdirSync(path.join(dir, 'releases'));
  writeFileSync(path.join(dir, 'releases', `${objectAt(base, 'info').version}.yaml`), stringify(base));
  writeFileSync(path.join(dir, 'openapi.yaml'), stringify(head));
  return path.join(dir, 'openapi.yaml');
}

const matches = (stdout: string, testCase: EditCase): boolean => {
  const lines = stdout.split('\n');
  return (
    testCase.lines.every((expected) => lines.some((line) => line.startsWith(expected))) &&
    (testCase.absent ?? []).every((prefix) => !lines.some((line) => line.startsWith(prefix)))
  );
};

describe('api:diff classifies each edit (against the newest release next to the contract)', () => {
  it('has at least 20 edits, breaking and not', async () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(20);
    expect(TABLE.filter((row) => row.exit === 1).length).toBeGreaterThanOrEqual(10);
  });

  it.each(TABLE.map((row) => [row.name, row] as const))('%s', async (_name, testCase) => {
    const spec = writeCase(testCase);
    const outcome = await runApiDiff(['--spec', spec], PROJECT_ROOT);
    expect(outcome.stderr).toBe('');
    for (const expected of testCase.lines) expect(outcome.stdout).toContain(`\n${expected}`);
    for (const prefix of testCase.absent ?? []) expect(outcome.stdout).not.toContain(`\n${prefix}`);
    expect(outcome.exitCode).toBe(testCase.exit);

    // What api-smart-diff alone says: the rows marked 'wrong' are those a project rule fixes.
    const library = await runApiDiff(['--spec', spec, '--library-only'], PROJECT_ROOT);
    const libraryRight = library.exitCode === testCase.exit && matches(library.stdout, testCase);
    expect(libraryRight ? 'right' : 'wrong').toBe(testCase.library);
  });
});

describe('api:diff output and errors', () => {
  const breakingSpec = (): string =>
    writeCase({ name: 'lowered maximum', edit: (d) => (limit(d, 'schema').maximum = 50), exit: 1, lines: [], library: 'right' });

  it('--format json: every change with class, location, values and reason, and the verdict', async () => {
    const outcome = await runApiDiff(['--spec', breakingSpec(), '--format', 'json'], PROJECT_ROOT);
    expect(outcome.exitCode).toBe(1);
    const result = JSON.parse(outcome.stdout);
    expect(result.passed).toBe(false);
    expect(result.base.version).toBe('1.0.0');
    expect(result.gate).toMatchObject({ breaking: 1, majorBumped: false, passed: false });
    expect(result.changes).toEqual([
      {
        class: 'breaking',
        location: 'paths./pets.get.parameters.limit.schema.maximum',
        operation: { operationId: 'listPets', method: 'get', path: '/pets', at: 'parameters.limit.schema.maximum' },
        action: 'replace',
        before: 100,
        after: 50,
        reason: 'requests that were valid are now refused',
        rule: 'bounds-by-direction',
      },
    ]);
  });

  it('--format markdown: the verdict, then a table a pull request can show', async () => {
    const outcome = await runApiDiff(['--spec', breakingSpec(), '--format', 'markdown'], PROJECT_ROOT);
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toMatch(/^### API contract: 1\.0\.0 against 1\.0\.0/);
    expect(outcome.stdout).toContain('❌ **Failed**: 1 breaking change and info.version 1.0.0 → 1.0.0 does not raise the major');
    expect(outcome.stdout).toContain('| Class | Location | Change | Why |');
    expect(outcome.stdout).toContain('| BREAKING | `paths./pets.get.parameters.limit.schema.maximum` | 100 → 50 | requests that were valid are now refused |');
  });

  it('bad arguments and a base that cannot be read are one line on stderr and exit 2', async () => {
    const spec = breakingSpec();
    const dir = path.dirname(spec);
    writeFileSync(path.join(dir, 'broken.yaml'), 'openapi: [3.1\n  paths: {');
    writeFileSync(path.join(dir, 'not-openapi.yaml'), 'hello: world\n');
    const cases: Array<[string[], RegExp]> = [
      [['--base', path.join(dir, 'missing.yaml')], /neither a file nor a git ref/],
      [['--base', path.join(dir, 'broken.yaml')], /broken\.yaml: not valid YAML/],
      [['--base', path.join(dir, 'not-openapi.yaml')], /not-openapi\.yaml: not an OpenAPI 3 document/],
      [['--base', '--upload-pack=x'], /.+/],
      [['--format', 'xml'], /--format must be one of text, json, markdown/],
      [['--bogus'], /Unknown option/],
    ];
    for (const [args, message] of cases) {
      const outcome = await runApiDiff(['--spec', spec, ...args], PROJECT_ROOT);
      expect({ args, exitCode: outcome.exitCode, stdout: outcome.stdout }).toEqual({ args, exitCode: 2, stdout: '' });
      expect(outcome.stderr.split('\n')[0]).toMatch(message);
    }
  });

  it('with no --base and no release recorded: exit 2, saying how to record one', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'openapi.yaml'), CONTRACT_TEXT);
    const outcome = await runApiDiff(['--spec', path.join(dir, 'openapi.yaml')], PROJECT_ROOT);
    expect(outcome.exitCode).toBe(2);
    expect(outcome.stderr).toMatch(/^api:diff: no release recorded in .*npm run api:release.*--base/);
  });
});

describe('the sunset rule: removing an operation deprecated with x-sunset (getPet, 2030-12-05)', () => {
  const GET_PET = 'paths./pets/{petId}.get';
  /** The contract as the release, and a head without getPet at `version` (plus `also` edits). */
  const removal = (version: string, also: (doc: Doc) => void = () => {}): string =>
    writeCase({
      name: 'getPet removed',
      edit: (d) => {
        delete objectAt(d, 'paths')['/pets/{petId}'];
        objectAt(d, 'info').version = version;
        also(d);
      },
      exit: 1,
      lines: [],
      library: 'right',
    });
  const diffOn = async (spec: string, today: string, ...args: string[]) => await runApiDiff(['--spec', spec, '--today', today, ...args], PROJECT_ROOT);

  it('within the major, before the sunset date: refused, naming the operation, its date and the Sunset header', async () => {
    for (const today of ['2026-11-23', '2030-12-04']) {
      const outcome = await diffOn(removal('1.1.0'), today);
      expect(outcome.stdout).toContain(`\nBREAKING ${GET_PET}: removed (clients calling it now fail, though its Sunset header promised it until 2030-12-05)\n`);
      expect(outcome.stdout).toContain(
        '\nFAIL: getPet (GET /pets/{petId}) is removed before its sunset date, 2030-12-05: its Sunset header promised clients it works until then; keep it until 2030-12-05, or remove it in a new major version\n',
      );
      expect(outcome.exitCode).toBe(1);
    }
  });

  it('within the major, on or after the sunset date: accepted as announced, and still listed as breaking', async () => {
    for (const [version, today] of [
      ['1.1.0', '2030-12-05'],
      ['1.0.1', '2031-06-01'],
    ] as const) {
      const outcome = await diffOn(removal(version), today);
      expect(outcome.stdout).toContain(`\nBREAKING ${GET_PET}: removed (clients calling it now fail, as its Sunset header announced for 2030-12-05)\n`);
      expect(outcome.stdout).toContain('\nOK: 1 breaking change, announced by the Sunset header of getPet (GET /pets/{petId}) on 2030-12-05\n');
      expect(outcome.exitCode).toBe(0);
    }
  });

  it('the sunset excuses only the removal: another breaking change in the same minor release is still refused', async () => {
    const outcome = await diffOn(
      removal('1.1.0', (d) => (limit(d, 'schema').maximum = 50)),
      '2031-01-01',
    );
    expect(outcome.stdout).toContain('\nFAIL: 1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major');
    expect(outcome.exitCode).toBe(1);
    const early = await diffOn(
      removal('1.1.0', (d) => (limit(d, 'schema').maximum = 50)),
      '2030-01-01',
    );
    expect(early.stdout).toMatch(
      /\nFAIL: getPet \(GET \/pets\/\{petId\}\) is removed before its sunset date, 2030-12-05: .*; 1 other breaking change and info.version 1\.0\.0 → 1\.1\.0 does not raise the major/,
    );
    expect(early.exitCode).toBe(1);
  });

  it('a deprecated operation without x-sunset promised no date: its removal needs a major bump, on any day', async () => {
    const spec = writeCase({
      name: 'getPet without x-sunset removed',
      base: (d) => delete objectAt(d, 'paths', '/pets/{petId}', 'get')['x-sunset'],
      edit: (d) => {
        delete objectAt(d, 'paths')['/pets/{petId}'];
        objectAt(d, 'info').version = '1.1.0';
      },
      exit: 1,
      lines: [],
      library: 'right',
    });
    const outcome = await diffOn(spec, '2099-01-01');
    expect(outcome.stdout).toContain(`\nBREAKING ${GET_PET}: removed (clients calling it now fail)\n`);
    expect(outcome.stdout).toContain('\nFAIL: 1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major');
    expect(outcome.exitCode).toBe(1);
  });

  it('across majors (--base the 1.x release, --spec a 2.0.0): an announced break before the sunset too, exit 0, listed as breaking', async () => {
    const spec = removal('2.0.0');
    const base = path.join(path.dirname(spec), 'releases', '1.0.0.yaml');
    const outcome = await diffOn(spec, '2026-11-23', '--base', base);
    expect(outcome.stdout).toContain(`\nBREAKING ${GET_PET}: removed (`);
    expect(outcome.stdout).toContain('\nOK: 1 breaking change, announced by a major version bump (info.version 1.0.0 → 2.0.0)\n');
    expect(outcome.exitCode).toBe(0);
    const json = JSON.parse((await diffOn(spec, '2026-11-23', '--base', base, '--format', 'json')).stdout);
    expect(json.gate).toMatchObject({
      passed: true,
      majorBumped: true,
      sunsetRemovals: [{ operationId: 'getPet', method: 'get', path: '/pets/{petId}', sunset: '2030-12-05', due: false }],
    });
  });

  it('--today must be a date (exit 2); without it, $API_DIFF_TODAY decides (the real CLI)', async () => {
    const spec = removal('1.1.0');
    for (const bad of ['2030-02-30', '05/12/2030', '']) {
      expect(await diffOn(spec, bad)).toMatchObject({
        exitCode: 2,
        stdout: '',
        stderr: `api:diff: --today must be a YYYY-MM-DD date, got ${JSON.stringify(bad)}\n`,
      });
    }
    const cli = (today: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/toolchain.ts', 'api-diff', '--spec', spec], {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, INIT_CWD: PROJECT_ROOT, API_DIFF_TODAY: today },
      });
    expect(cli('2030-12-04')).toMatchObject({
      status: 1,
      stdout: expect.stringContaining('\nFAIL: getPet (GET /pets/{petId}) is removed before its sunset date, 2030-12-05'),
    });
    expect(cli('2030-12-05')).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('\nOK: 1 breaking change, announced by the Sunset header of getPet'),
    });
  });

  it('api:release applies the same rule on its --today, and records that day as the release date', async () => {
    const spec = removal('1.1.0');
    const releases = path.join(path.dirname(spec), 'releases');
    const early = await runApiRelease(['--spec', spec, '--today', '2030-12-04'], PROJECT_ROOT);
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toMatch(/^api:release: getPet \(GET \/pets\/\{petId\}\) is removed before its sunset date, 2030-12-05: its Sunset header promised/);
    expect(existsSync(path.join(releases, '1.1.0.yaml'))).toBe(false);

    expect(await runApiRelease(['--spec', spec, '--today', '2030-12-05'], PROJECT_ROOT)).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(readFileSync(path.join(releases, 'index.json'), 'utf8'))).toEqual({ '1.1.0': { date: '2030-12-05' } });
    expect(readFileSync(path.join(path.dirname(spec), 'CHANGELOG.md'), 'utf8')).toContain(
      '\n### getPet (GET /pets/{petId})\n\n- **BREAKING** operation removed (clients calling it now fail, as its Sunset header announced for 2030-12-05)\n',
    );
  });
});

describe('api:diff --base <git ref> (a temporary repository with the contract committed)', () => {
  const git = (cwd: string, ...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });

  /** A repository whose HEAD has openapi/v1/openapi.yaml = the contract; returns the working copy's path. */
  function repository(): string {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'openapi', 'v1'), { recursive: true });
    writeFileSync(path.join(dir, 'openapi', 'v1', 'openapi.yaml'), CONTRACT_TEXT);
    expect(git(dir, 'init', '-q').status).toBe(0);
    git(dir, 'add', '-A');
    expect(git(dir, 'commit', '-qm', 'contract').status).toBe(0);
    return path.join(dir, 'openapi', 'v1', 'openapi.yaml');
  }
  const edit = (spec: string, change: (doc: Doc) => void): void => {
    const doc = contract();
    change(doc);
    writeFileSync(spec, stringify(doc));
  };

  it('exit 1 on a breaking working-tree edit, 0 on an additive one, 0 on a breaking one with a major bump', async () => {
    const spec = repository();
    expect(await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT)).toMatchObject({
      exitCode: 0,
      stdout: expect.stringContaining('\nno changes\n'),
    });

    edit(spec, (d) => delete objectAt(d, 'paths')['/store/orders']);
    const breaking = await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT);
    expect(breaking.stdout).toContain(
      'against HEAD:openapi/v1/openapi.yaml (1.0.0)\nBREAKING paths./store/orders.get: removed (clients calling it now fail)\n',
    );
    expect(breaking.exitCode).toBe(1);

    edit(spec, (d) => (schemas(d, 'NewPet', 'properties').breed = { type: 'string' }));
    expect((await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT)).exitCode).toBe(0);

    edit(spec, (d) => {
      delete objectAt(d, 'paths')['/store/orders'];
      objectAt(d, 'info').version = '2.0.0';
    });
    expect((await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT)).exitCode).toBe(0);
  });

  it('a ref that does not have the contract, or does not exist: one line, exit 2', async () => {
    const spec = repository();
    const dir = path.dirname(path.dirname(path.dirname(spec)));
    writeFileSync(path.join(dir, 'other.txt'), 'x');
    git(dir, 'rm', '-q', 'openapi/v1/openapi.yaml');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'contract removed');
    mkdirSync(path.dirname(spec), { recursive: true });
    writeFileSync(spec, CONTRACT_TEXT);
    for (const ref of ['HEAD', 'v9.9.9']) {
      const outcome = await runApiDiff(['--spec', spec, '--base', ref], PROJECT_ROOT);
      expect(outcome.exitCode).toBe(2);
      expect(outcome.stderr).toMatch(
        new RegExp(`^api:diff: --base ${ref.replace(/\./g, '\\.')}: neither a file nor a git ref that has openapi/v1/openapi.yaml \\(fatal: [^\\n]*\\)\\n$`),
      );
    }
    expect((await runApiDiff(['--spec', spec, '--base', 'HEAD~1'], PROJECT_ROOT)).exitCode).toBe(0);
  });
});

describe('a document split across files (the Petstore of test/fixtures/third-party, split by redocly split)', () => {
  const git = (cwd: string, ...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });

  /** A repository with openapi/v3 split into openapi.yaml, paths/ and components/, committed; returns the root document. */
  function splitRepository(): string {
    const dir = tempDir();
    const folder = path.join(dir, 'openapi', 'v3');
    mkdirSync(folder, { recursive: true });
    const split = spawnSync(
      path.join(PROJECT_ROOT, 'node_modules/.bin/redocly'),
      ['split', path.join(PROJECT_ROOT, 'test/fixtures/third-party/swagger-petstore-3.1.yaml'), '--outDir', folder],
      {
        encoding: 'utf8',
        // Under NODE_ENV=test (jest's), redocly split leaves the root document unwritten.
        env: { ...process.env, NODE_ENV: 'production' },
      },
    );
    expect(split.status).toBe(0);
    expect(existsSync(path.join(folder, 'components', 'schemas', 'Order.yaml'))).toBe(true);
    expect(git(dir, 'init', '-q').status).toBe(0);
    git(dir, 'add', '-A');
    expect(git(dir, 'commit', '-qm', 'split contract').status).toBe(0);
    return path.join(folder, 'openapi.yaml');
  }
  /** A breaking edit in a referenced file, not in the root document: Order.quantity becomes a string. */
  const breakOrder = (spec: string): void => {
    const file = path.join(path.dirname(spec), 'components', 'schemas', 'Order.yaml');
    const order = parse(readFileSync(file, 'utf8'));
    order.properties.quantity.type = 'string';
    writeFileSync(file, stringify(order));
  };
  const QUANTITY =
    /BREAKING paths\.\/store\/order\/\{orderId\}\.get\.responses\.200\.content\.application\/json\.schema\.properties\.quantity\.type: "integer" → "string"/;

  it('against a git ref: the folder at that ref is bundled, and an edit in a referenced file is breaking', async () => {
    const spec = splitRepository();
    expect(await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT)).toMatchObject({
      exitCode: 0,
      stdout: expect.stringContaining('\nno changes\n'),
    });
    breakOrder(spec);
    const outcome = await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT);
    expect(outcome.stdout).toMatch(QUANTITY);
    expect(outcome.exitCode).toBe(1);
  });

  it('against a file, and api:release records the release as one self-contained file', async () => {
    const spec = splitRepository();
    breakOrder(spec);
    const outcome = await runApiDiff(['--spec', spec, '--base', path.join(PROJECT_ROOT, 'test/fixtures/third-party/swagger-petstore-3.1.yaml')], PROJECT_ROOT);
    expect(outcome.stdout).toMatch(QUANTITY);
    expect(outcome.exitCode).toBe(1);
    const released = await runApiRelease(['--spec', spec], PROJECT_ROOT);
    expect(released.exitCode).toBe(0);
    const record = readFileSync(path.join(path.dirname(spec), 'releases', '1.0.0.yaml'), 'utf8');
    expect(record).not.toMatch(/\$ref: ['"]?\.\.?\//);
    expect(parse(record).info.version).toBe('1.0.0');
  });

  it('a reference to a missing file: one line naming it, exit 2', async () => {
    const spec = splitRepository();
    const text = readFileSync(spec, 'utf8').replace(/paths\/pet\.yaml/, 'paths/no-such-file.yaml');
    writeFileSync(spec, text);
    const outcome = await runApiDiff(['--spec', spec, '--base', 'HEAD'], PROJECT_ROOT);
    expect(outcome.exitCode).toBe(2);
    expect(outcome.stderr).toMatch(/cannot bundle its references: .*no-such-file\.yaml/);
  });
});

describe('the real CLI', () => {
  const cli = (script: string, args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, INIT_CWD: PROJECT_ROOT },
    });

  const DOCUMENTS = ['openapi/v1/openapi.yaml', 'openapi/v2/openapi.yaml'];

  it('--base HEAD on a clean tree: every version, exit 0, no changes (with a contract edited, the edit is listed)', async () => {
    const result = cli('scripts/toolchain.ts', ['api-diff', '--base', 'HEAD']);
    expect(result.stderr).toBe('');
    for (const [index, document] of DOCUMENTS.entries()) {
      const version = `v${index + 1}`;
      const section = result.stdout.split(/^(?==== )/m).find((part) => part.startsWith(`=== ${version}: ${document} ===\n`));
      expect(section).toBeDefined();
      const clean = spawnSync('git', ['diff', '--quiet', 'HEAD', '--', document], { cwd: PROJECT_ROOT }).status === 0;
      if (clean) {
        expect(section).toMatch(
          new RegExp(`^=== ${version}: ${document} ===\\napi:diff ${document} \\((.+)\\) against HEAD:${document} \\(\\1\\)\\nno changes\\n`),
        );
      } else {
        expect(section).toMatch(/\n\d+ changes?: /); // a developer's uncommitted edit of the contract
      }
    }
    expect(result.status).toBe(0);
  });

  it('no --base: each version against the newest release in its own openapi/vN/releases, under a header, and no unannounced break', async () => {
    const result = cli('scripts/toolchain.ts', ['api-diff']);
    expect(result.stdout).toMatch(
      /^=== v1: openapi\/v1\/openapi.yaml ===\napi:diff openapi\/v1\/openapi.yaml \(1\.\d+\.\d+\) against openapi\/v1\/releases\/1\.[^ ]+\.yaml \(.+\)\n/,
    );
    expect(result.stdout).toMatch(
      /\n=== v2: openapi\/v2\/openapi.yaml ===\napi:diff openapi\/v2\/openapi.yaml \(2\.\d+\.\d+\) against openapi\/v2\/releases\/2\.[^ ]+\.yaml \(.+\)\n/,
    );
    expect(result.status).toBe(0);
  });

  it('across versions (--base openapi/v1/openapi.yaml --spec openapi/v2/openapi.yaml): exit 0; since 2.3 brought getPet back, v2 breaks nothing of v1', async () => {
    const result = cli('scripts/toolchain.ts', ['api-diff', '--base', 'openapi/v1/openapi.yaml', '--spec', 'openapi/v2/openapi.yaml']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^api:diff openapi\/v2\/openapi.yaml \(2\.\d+\.\d+\) against openapi\/v1\/openapi.yaml \(1\.\d+\.\d+\)\n/);
    expect(result.stdout).toContain('\nNON-BREAKING paths./store/orders.post: added (a new operation)');
    expect(result.stdout).not.toContain('\nBREAKING ');
    expect(result.stdout).toMatch(/\nOK: no breaking changes\n$/);
    expect(result.status).toBe(0);
    const json = JSON.parse(cli('scripts/toolchain.ts', ['api-diff', '--base', 'openapi/v1/openapi.yaml', '--version', 'v2', '--format', 'json']).stdout);
    expect(json.gate).toMatchObject({ passed: true, majorBumped: true, breaking: 0 });
  });

  it('a breaking edit: the verdict line and exit 1; an unknown ref: one line per version and exit 2', async () => {
    const spec = writeCase({
      name: 'new required field',
      edit: (d) => arrayAt(schemas(d, 'NewPet'), 'required').push('status'),
      exit: 1,
      lines: [],
      library: 'right',
    });
    const breaking = cli('scripts/toolchain.ts', ['api-diff', '--spec', spec, '--base', path.join(path.dirname(spec), 'releases', '1.0.0.yaml')]);
    expect(breaking.stdout).toContain(`\nBREAKING ${BODY}.required: added "status" (requests that were valid are now refused)\n`);
    expect(breaking.status).toBe(1);

    const unknown = cli('scripts/toolchain.ts', ['api-diff', '--base', 'no-such-ref-9f3a']);
    expect(unknown.stderr).toMatch(
      /^api:diff: v1: --base no-such-ref-9f3a: neither a file nor a git ref that has openapi\/v1\/openapi.yaml \(fatal: .*\)\napi:diff: v2: --base no-such-ref-9f3a: neither a file nor a git ref that has openapi\/v2\/openapi.yaml \(fatal: .*\)\n$/,
    );
    expect(unknown.status).toBe(2);
  });
});

describe('one document per major version (a project with openapi/v1 and openapi/v2, each with its releases)', () => {
  /** A project root with v1 (released 1.0.0) and v2 (released 2.0.0, without getPet), each document as released. */
  function twoVersions(): string {
    const root = tempDir();
    const v2 = contract();
    delete objectAt(v2, 'paths')['/pets/{petId}'];
    objectAt(v2, 'info').version = '2.0.0';
    for (const [name, doc] of [
      ['v1', contract()],
      ['v2', v2],
    ] as const) {
      mkdirSync(path.join(root, 'openapi', name, 'releases'), { recursive: true });
      writeFileSync(path.join(root, 'openapi', name, 'openapi.yaml'), stringify(doc));
      writeFileSync(path.join(root, 'openapi', name, 'releases', `${objectAt(doc, 'info').version}.yaml`), stringify(doc));
    }
    return root;
  }
  const editVersion = (root: string, name: string, change: (doc: Doc) => void): void => {
    const file = path.join(root, 'openapi', name, 'openapi.yaml');
    const doc: Doc = parse(readFileSync(file, 'utf8'));
    change(doc);
    writeFileSync(file, stringify(doc));
  };

  it('api:diff with no --spec: every version against its own newest release, a header each; exit 1 when any fails', async () => {
    const root = twoVersions();
    const clean = await runApiDiff([], root, root);
    expect(clean).toEqual({
      exitCode: 0,
      stdout:
        '=== v1: openapi/v1/openapi.yaml ===\napi:diff openapi/v1/openapi.yaml (1.0.0) against openapi/v1/releases/1.0.0.yaml (1.0.0)\nno changes\n\n' +
        '=== v2: openapi/v2/openapi.yaml ===\napi:diff openapi/v2/openapi.yaml (2.0.0) against openapi/v2/releases/2.0.0.yaml (2.0.0)\nno changes\n',
      stderr: '',
    });

    editVersion(root, 'v2', (d) => (limit(d, 'schema').maximum = 50));
    const failing = await runApiDiff([], root, root);
    expect(failing.exitCode).toBe(1);
    const [v1, v2] = failing.stdout.split('\n=== v2: ');
    expect(v1).toContain('no changes');
    expect(v2).toContain('\nBREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50');
    expect(v2).toContain('\nFAIL: 1 breaking change and info.version 2.0.0 → 2.0.0 does not raise the major: set info.version to 3.0.0');

    // One version alone: no header, as with --spec.
    expect(await runApiDiff(['--version', 'v1'], root, root)).toMatchObject({
      exitCode: 0,
      stdout: expect.stringMatching(/^api:diff openapi\/v1\/openapi.yaml \(1\.0\.0\)/),
    });
    expect(await runApiDiff(['--version', '2'], root, root)).toMatchObject({
      exitCode: 1,
      stdout: expect.stringMatching(/^api:diff openapi\/v2\/openapi.yaml \(2\.0\.0\)/),
    });

    const markdown = await runApiDiff(['--format', 'markdown'], root, root);
    expect(markdown.stdout).toMatch(/^## v1 \(`openapi\/v1\/openapi.yaml`\)\n\n### API contract: 1\.0\.0 against 1\.0\.0/);
    expect(markdown.stdout).toContain('\n## v2 (`openapi/v2/openapi.yaml`)\n\n### API contract: 2.0.0 against 2.0.0');
    const json = JSON.parse((await runApiDiff(['--format', 'json'], root, root)).stdout);
    expect(json).toMatchObject({
      passed: false,
      versions: { v1: { passed: true, document: 'openapi/v1/openapi.yaml' }, v2: { passed: false, document: 'openapi/v2/openapi.yaml' } },
    });
  });

  it('a version without a release, an unknown --version, --spec with --version, a file --base for every version: exit 2', async () => {
    const root = twoVersions();
    mkdirSync(path.join(root, 'openapi', 'v3'));
    writeFileSync(path.join(root, 'openapi', 'v3', 'openapi.yaml'), CONTRACT_TEXT.replace(/^( {2}version: ).*$/m, '$13.0.0'));
    const unreleased = await runApiDiff([], root, root);
    expect(unreleased.exitCode).toBe(2);
    expect(unreleased.stdout).toContain('\n=== v3: openapi/v3/openapi.yaml ===\nnot compared: see the error on stderr\n');
    expect(unreleased.stderr).toBe(
      'api:diff: v3: no release recorded in openapi/v3/releases (npm run api:release records one); pass --base <git ref or file>\n',
    );

    expect(await runApiDiff(['--version', 'v9'], root, root)).toMatchObject({
      exitCode: 2,
      stdout: '',
      stderr: expect.stringMatching(/^api:diff: --version v9: no such version of the contract \(the versions are v1, v2, v3/),
    });
    expect(await runApiDiff(['--version', 'v1', '--spec', 'x.yaml'], root, root)).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/^api:diff: --spec and --version both name a document/),
    });
    expect(await runApiDiff(['--base', 'openapi/v1/openapi.yaml'], root, root)).toMatchObject({
      exitCode: 2,
      stderr:
        'api:diff: --base openapi/v1/openapi.yaml is a file, and the contract has 3 versions: name the document to compare with it (--spec <file> or --version vN)\n',
    });
  });

  it("api:release: with several versions, says to name one; --version vN records into that version's own releases", async () => {
    const root = twoVersions();
    const unnamed = await runApiRelease(['--today', '2027-01-15'], root, root);
    expect(unnamed.exitCode).toBe(2);
    expect(unnamed.stderr).toMatch(
      /^api:release: the contract has 2 major versions \(v1 openapi\/v1\/openapi.yaml, v2 openapi\/v2\/openapi.yaml\): say which one, e\.g\. npm run api:release -- --version v2 \(or --spec openapi\/v2\/openapi.yaml\)\n/,
    );
    expect(existsSync(path.join(root, 'openapi', 'v2', 'CHANGELOG.md'))).toBe(false);

    editVersion(root, 'v2', (d) => {
      objectAt(d, 'info').version = '2.1.0';
      schemas(d, 'NewPet', 'properties').breed = { type: 'string' };
    });
    const released = await runApiRelease(['--version', 'v2', '--today', '2027-01-15'], root, root);
    expect(released).toMatchObject({
      exitCode: 0,
      stderr: '',
      stdout: expect.stringContaining('Released 2.1.0 on 2027-01-15: openapi/v2/releases/2.1.0.yaml (last release 2.0.0)'),
    });
    expect(existsSync(path.join(root, 'openapi', 'v2', 'releases', '2.1.0.yaml'))).toBe(true);
    expect(existsSync(path.join(root, 'openapi', 'v1', 'releases', '2.1.0.yaml'))).toBe(false);
    expect((await runApiDiff([], root, root)).exitCode).toBe(0);
  });
});

describe('api:release records the contract as openapi/v1/releases/<version>.yaml', () => {
  /** A contract copy with its own releases/ folder holding `released` versions of it. */
  function project(released: string[]): { spec: string; releases: string } {
    const dir = tempDir();
    const releases = path.join(dir, 'releases');
    mkdirSync(releases);
    for (const version of released) {
      const doc = contract();
      objectAt(doc, 'info').version = version;
      writeFileSync(path.join(releases, `${version}.yaml`), stringify(doc));
    }
    return { spec: path.join(dir, 'openapi.yaml'), releases };
  }
  const write = (spec: string, edit: (doc: Doc) => void): void => {
    const doc = contract();
    edit(doc);
    writeFileSync(spec, stringify(doc));
  };

  it('the repository records release 1.0.0', async () => {
    expect(parse(readFileSync(path.join(PROJECT_ROOT, 'openapi', 'v1', 'releases', '1.0.0.yaml'), 'utf8')).info.version).toBe('1.0.0');
  });

  it('writes a byte-for-byte copy for a new version, and never overwrites one', async () => {
    const { spec, releases } = project(['1.0.0']);
    write(spec, (d) => {
      objectAt(d, 'info').version = '1.1.0';
      schemas(d, 'NewPet', 'properties').breed = { type: 'string' };
    });
    const first = await runApiRelease(['--spec', spec, '--today', '2027-01-15'], PROJECT_ROOT);
    expect(first).toMatchObject({ exitCode: 0, stderr: '' });
    expect(first.stdout).toContain('Released 1.1.0 on 2027-01-15');
    expect(first.stdout).toContain(
      `git add ${path.join(releases, '1.1.0.yaml')} ${path.join(releases, 'index.json')} ${path.join(path.dirname(spec), 'CHANGELOG.md')}\n`,
    );
    expect(readFileSync(path.join(releases, '1.1.0.yaml'), 'utf8')).toBe(readFileSync(spec, 'utf8'));

    const again = await runApiRelease(['--spec', spec], PROJECT_ROOT);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe(`api:release: 1.1.0 is already released (${path.join(releases, '1.1.0.yaml')}); raise info.version first\n`);
  });

  it('refuses a breaking change without a major bump, and accepts it with one', async () => {
    const { spec, releases } = project(['1.0.0']);
    write(spec, (d) => {
      objectAt(d, 'info').version = '1.1.0';
      limit(d, 'schema').maximum = 50;
    });
    const refused = await runApiRelease(['--spec', spec], PROJECT_ROOT);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/^api:release: 1 breaking change and info.version 1.0.0 → 1.1.0 does not raise the major/);
    expect(refused.stdout).toContain('BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50');
    expect(existsSync(path.join(releases, '1.1.0.yaml'))).toBe(false);

    write(spec, (d) => {
      objectAt(d, 'info').version = '2.0.0';
      limit(d, 'schema').maximum = 50;
    });
    expect((await runApiRelease(['--spec', spec], PROJECT_ROOT)).exitCode).toBe(0);
    expect(existsSync(path.join(releases, '2.0.0.yaml'))).toBe(true);
  });

  it('refuses a version below the last release, and a version that is not semver', async () => {
    const { spec } = project(['1.0.0', '1.2.0']);
    write(spec, (d) => (objectAt(d, 'info').version = '1.1.0'));
    expect(await runApiRelease(['--spec', spec], PROJECT_ROOT)).toMatchObject({
      exitCode: 1,
      stderr: 'api:release: info.version 1.1.0 is not above the last release 1.2.0\n',
    });
    write(spec, (d) => (objectAt(d, 'info').version = 'v2'));
    expect(await runApiRelease(['--spec', spec], PROJECT_ROOT)).toMatchObject({
      exitCode: 2,
      stderr: 'api:release: info.version "v2" is not a semver version (MAJOR.MINOR.PATCH)\n',
    });
  });

  it('api:diff with no --base picks the newest release by semver (1.10.0 after 1.9.0), not by name', async () => {
    const { spec, releases } = project(['1.0.0', '1.9.0', '1.10.0']);
    writeFileSync(path.join(releases, 'notes.txt'), 'not a release');
    write(spec, (d) => (objectAt(d, 'info').version = '1.10.0'));
    const outcome = await runApiDiff(['--spec', spec], PROJECT_ROOT);
    expect(outcome.stdout).toContain(`against ${path.join(releases, '1.10.0.yaml')} (1.10.0)\nno changes`);
    expect(outcome.exitCode).toBe(0);
  });
});
