import { mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { deprecationHeaders, listOperations } from '@spec-first/engine/testing';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';
import { projectVersions, scaffold } from '@spec-first/toolchain';
import { operationTable } from '../generated/v1/operations';
import { PROJECT_ROOT, tempDir } from './support/paths';

const spec = loadSpec();

describe('the contract (openapi/v1/openapi.yaml)', () => {
  it('is OpenAPI 3.1, version 1.x, with production, staging and local servers all ending in /v1', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.version).toMatch(/^1\.\d+\.\d+$/);
    expect(spec.servers?.map((server) => server.url)).toEqual(['{base_url}', '{staging_base_url}', 'http://localhost:3000/v1']);
  });

  it('declares the seed operations, getPet deprecated, every operation secured', () => {
    const ops = listOperations(spec).map((op) => [op.operationId, op.method, op.path, op.operation.deprecated === true]);
    expect(ops).toEqual([
      ['listPets', 'get', '/pets', false],
      ['createPet', 'post', '/pets', false],
      ['getPet', 'get', '/pets/{petId}', true],
      ['listStoreOrders', 'get', '/store/orders', false],
    ]);
    expect(spec['security']).toEqual([{ bearerAuth: [] }]);
    for (const op of listOperations(spec)) expect(op.operation['security']).toBeUndefined();
  });
});

describe('deprecation headers derive from the contract', () => {
  it('getPet: Deprecation (RFC 9745), Sunset (RFC 8594) and the successor link', () => {
    expect(deprecationHeaders(spec, '/v1')).toEqual(
      new Map([
        [
          'getPet',
          {
            Deprecation: '@1795219200',
            Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
            Link: '</v1/pets>; rel="successor-version"',
          },
        ],
      ]),
    );
  });

  it('any operation marked deprecated in the YAML gets them, with no code change', () => {
    const edited = structuredClone(spec);
    Object.assign(objectAt(edited, 'paths', '/store/orders', 'get'), { deprecated: true, 'x-deprecated-at': '2027-01-01', 'x-sunset': '2028-02-29' });
    const headers = deprecationHeaders(edited, '/v1').get('listStoreOrders');
    expect(headers).toEqual({ Deprecation: '@1798761600', Sunset: 'Tue, 29 Feb 2028 00:00:00 GMT' });
  });

  it('a deprecated operation with a bad date or successor is refused at start', () => {
    const edited = structuredClone(spec);
    const getPet = objectAt(edited, 'paths', '/pets/{petId}', 'get');
    getPet['x-sunset'] = 'next year';
    expect(() => deprecationHeaders(edited, '/v1')).toThrow(/x-sunset must be a YYYY-MM-DD date/);
    getPet['x-sunset'] = '2030-12-05';
    getPet['x-successor'] = { operationId: 'nope' };
    expect(() => deprecationHeaders(edited, '/v1')).toThrow(/x-successor nope is not an operation/);
  });
});

describe('generated/ (npm run generate)', () => {
  const generate = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/toolchain.ts', 'generate', ...args], { cwd: PROJECT_ROOT, encoding: 'utf8' });

  it('is up to date with the YAML (npm run check:generated passes)', () => {
    const result = generate('--check');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('check:generated fails, naming the stale files, when the YAML changed', () => {
    const dir = tempDir();
    const edited = path.join(dir, 'openapi.yaml');
    writeFileSync(
      edited,
      readFileSync(path.join(PROJECT_ROOT, 'openapi/v1/openapi.yaml'), 'utf8').replace(
        'enum: [available, pending, sold]',
        'enum: [available, pending, sold, adopted]',
      ),
    );
    const result = generate('--check', '--spec', edited);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Generated files are stale: generated\/v1\/openapi\.ts/);
    // Regenerating into another folder writes the new value.
    expect(generate('--spec', edited, '--out', dir).status).toBe(0);
    expect(readFileSync(path.join(dir, 'openapi.ts'), 'utf8')).toContain('"adopted"');
  });

  it('the operation table records method, path and the schema defaults the validator applies', () => {
    expect(operationTable.listPets).toEqual({
      operationId: 'listPets',
      method: 'get',
      path: '/pets',
      authentication: 'required',
      security: [['bearerAuth']],
      defaulted: { query: ['limit'], body: [] },
    });
    expect(operationTable.createPet.defaulted.body).toEqual(['status']);
  });
});

describe('npm run scaffold', () => {
  const versions = (v1: string[], v2: string[]) => [
    { name: 'v1', document: 'openapi/v1/openapi.yaml', operationIds: v1 },
    { name: 'v2', document: 'openapi/v2/openapi.yaml', operationIds: v2 },
  ];

  it('creates a stub (notImplementedHandler) for each operation without a handler, never overwrites one, and rewrites the registries', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'getPet.ts'), '// my implementation\n');
    const created = scaffold(dir, versions(['getPet', 'listPets', 'adoptPet'], ['listPets', 'adoptPet', 'fosterPet']));
    expect(created.sort()).toEqual(['adoptPet', 'fosterPet', 'listPets']);
    expect(readFileSync(path.join(dir, 'getPet.ts'), 'utf8')).toBe('// my implementation\n');
    expect(readFileSync(path.join(dir, 'adoptPet.ts'), 'utf8')).toContain("export const adoptPet = notImplementedHandler('adoptPet');");
    // The stub's hint names the versions the handler serves.
    expect(readFileSync(path.join(dir, 'adoptPet.ts'), 'utf8')).toContain("export const adoptPet: Handler<'adoptPet', 'v1' | 'v2'> =");
    expect(readFileSync(path.join(dir, 'fosterPet.ts'), 'utf8')).toContain("export const fosterPet: Handler<'fosterPet', 'v2'> =");
    const registry = readFileSync(path.join(dir, 'index.ts'), 'utf8');
    for (const id of ['adoptPet', 'fosterPet', 'getPet', 'listPets']) expect(registry).toContain(`import { ${id} } from './${id}';`);
    expect(registry).toContain(
      "/** openapi/v1/openapi.yaml */\nexport const v1 = {\n  adoptPet,\n  getPet,\n  listPets,\n} satisfies HandlerRegistry<'v1'>;\n",
    );
    expect(registry).toContain(
      "/** openapi/v2/openapi.yaml */\nexport const v2 = {\n  adoptPet,\n  fosterPet,\n  listPets,\n} satisfies HandlerRegistry<'v2'>;\n",
    );
    expect(registry).toContain('export const registries = { v1, v2 };\n');
    expect(registry).toContain('export const handlers = v1;\n');
    expect(readdirSync(dir).sort()).toEqual(['adoptPet.ts', 'fosterPet.ts', 'getPet.ts', 'index.ts', 'listPets.ts']);
  });

  it('the committed handlers are exactly what scaffold writes (one file per operation of any version, plus the registries)', async () => {
    const dir = path.join(PROJECT_ROOT, 'src', 'service', 'handlers');
    const project = await projectVersions(PROJECT_ROOT);
    expect(project.map((version) => version.name)).toEqual(['v1', 'v2']);
    expect(project[0]!.operationIds).toEqual(Object.keys(operationTable));
    // One file per operation plus the registry; types.ts holds the handler types, context.ts what they use besides the request.
    const files = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
    expect(
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name),
    ).toEqual([]);
    const operationIds = new Set(project.flatMap((version) => version.operationIds));
    expect(files).toEqual([...[...operationIds].map((id) => `${id}.ts`), 'context.ts', 'index.ts', 'types.ts'].sort());
    const copy = mkdtempSync(path.join(tempDir(), 'h-'));
    for (const file of files) writeFileSync(path.join(copy, file), readFileSync(path.join(dir, file)));
    expect(scaffold(copy, project)).toEqual([]);
    expect(readFileSync(path.join(copy, 'index.ts'), 'utf8')).toBe(readFileSync(path.join(dir, 'index.ts'), 'utf8'));
  });
});
