/**
 * How a document becomes something the engine serves, and how it refuses one
 * it cannot: the one rule that turns operationIds into identifiers (and
 * refuses two that collide, at generate), documents split across files
 * (relative `$ref`s bundled), and a document that cannot be loaded or
 * compiled stopping `npm start` with a message naming the file, the
 * reference or schema and the reason: never a 500 per request later.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { loadDocument as loadContract } from '@spec-first/engine';
import { derivedName, identifierOf, operationNames, ContractLoadError } from '@spec-first/engine/testing';
import { copyProject, runNpm } from './support/project-copy';
import { startServer } from './support/processes';
import { createKeyWithCli } from './support/server-env';
import { PROJECT_ROOT, tempDir } from './support/paths';

jest.setTimeout(120_000);

describe('operationIds become identifiers by one rule', () => {
  it.each([
    ['get-orders', 'getOrders'],
    ['orders.list', 'ordersList'],
    ['list data sets', 'listDataSets'],
    ['cookies_standard', 'cookiesStandard'],
    ['GetPet', 'GetPet'],
    ['2fa-verify', '_2faVerify'],
    ['delete', 'delete_'],
    ['index', 'index_'],
    ['types', 'types_'],
    ['context', 'context_'],
    ['handlers', 'handlers_'],
    ['notImplementedHandler', 'notImplementedHandler_'],
    ['v1', 'v1_'],
    ['v1-list', 'v1List'],
    ['listPets', 'listPets'],
  ])('%s → %s', (operationId, identifier) => {
    expect(identifierOf(operationId)).toBe(identifier);
  });

  it('an operation without an operationId is named by its method and path', () => {
    expect(derivedName('post', '/anything/image-png')).toBe('postAnythingImagePng');
    expect(derivedName('get', '/pets/{petId}')).toBe('getPetsPetId');
  });

  it('two operationIds with one identifier are refused, naming both and their paths', () => {
    expect(() =>
      operationNames([
        { operationId: 'get-orders', method: 'get', path: '/orders' },
        { operationId: 'get_orders', method: 'get', path: '/v2/orders' },
      ]),
    ).toThrow('two operations have the identifier "getOrders": operationId "get-orders" at GET /orders and operationId "get_orders" at GET /v2/orders');
  });

  it('npm run generate refuses such a document with that message, and writes nothing', () => {
    const root = copyProject();
    const file = path.join(root, 'openapi/v1/openapi.yaml');
    const document = parse(readFileSync(file, 'utf8'));
    document.paths['/orders-again'] = { get: { ...document.paths['/store/orders'].get, operationId: 'list-store-orders' } };
    writeFileSync(file, stringify(document));
    const before = readFileSync(path.join(root, 'generated/v1/operations.ts'), 'utf8');
    const generated = runNpm(root, 'generate');
    expect(generated.status).not.toBe(0);
    expect(generated.output).toContain('two operations have the identifier "listStoreOrders"');
    expect(generated.output).toContain('operationId "list-store-orders" at GET /orders-again');
    expect(readFileSync(path.join(root, 'generated/v1/operations.ts'), 'utf8')).toBe(before);
  });
});

describe('documents split across files', () => {
  /** openapi/ copied to a temp folder, v1's Pet schema moved to ./schemas/pet.yaml; returns the folder. */
  function splitContracts(): string {
    const dir = path.join(tempDir(), 'openapi');
    cpSync(path.join(PROJECT_ROOT, 'openapi'), dir, { recursive: true });
    const file = path.join(dir, 'v1/openapi.yaml');
    const document = parse(readFileSync(file, 'utf8'));
    mkdirSync(path.join(dir, 'v1/schemas'));
    // Its own references to the root document's components now go back up to it.
    const pet = stringify(document.components.schemas.Pet).replace(/(\$ref: ["']?)#\//g, '$1../openapi.yaml#/');
    writeFileSync(path.join(dir, 'v1/schemas/pet.yaml'), pet);
    document.components.schemas.Pet = { $ref: './schemas/pet.yaml' };
    writeFileSync(file, stringify(document));
    return dir;
  }

  it('loadContract bundles the relative $ref: the schema is there, under components', async () => {
    const dir = splitContracts();
    const bundled = await loadContract(path.join(dir, 'v1/openapi.yaml'));
    expect(JSON.stringify(bundled)).not.toContain('./schemas/pet.yaml');
    // Redocly keeps the name as a reference to the file's schema, which it adds under components.
    const schemas = bundled.components!.schemas as Record<string, { $ref?: string; properties?: object }>;
    const target = schemas['Pet']!.$ref!.replace('#/components/schemas/', '');
    expect(Object.keys(schemas[target]!.properties!)).toEqual(expect.arrayContaining(['id', 'name', 'categoryId', 'status']));
  });

  it('a $ref to a missing file: ContractLoadError naming the file and the reference', async () => {
    const dir = splitContracts();
    const file = path.join(dir, 'v1/openapi.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('./schemas/pet.yaml', './schemas/missing.yaml'));
    const failure = loadContract(file);
    await expect(failure).rejects.toBeInstanceOf(ContractLoadError);
    await expect(failure).rejects.toThrow(/openapi\.yaml.*missing\.yaml/s);
  });

  it('the server serves the split document (OPENAPI_DIR), and stops at start when a reference is broken', async () => {
    const dir = splitContracts();
    const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, OPENAPI_DIR: dir };
    const server = await startServer(env);
    try {
      const response = await fetch(`${server.url}/openapi.json`);
      const published = (await response.json()) as { components: { schemas: Record<string, { $ref?: string }> } };
      const target = published.components.schemas['Pet']!.$ref!.replace('#/components/schemas/', '');
      expect(published.components.schemas[target]).toMatchObject({ type: 'object' });
      // And a request is validated against it: the bundled document is the one served.
      expect((await fetch(`${server.url}/v1/pets?limit=0`)).status).toBe(401);
    } finally {
      await server.stop();
    }
    const file = path.join(dir, 'v1/openapi.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('./schemas/pet.yaml', './schemas/missing.yaml'));
    const failed = startServer(env);
    await expect(failed).rejects.toThrow(/server exited with 1[\s\S]*missing\.yaml/);
  });

  it('a schema that does not compile stops the start, naming the operation and the schema', async () => {
    const dir = path.join(tempDir(), 'openapi');
    cpSync(path.join(PROJECT_ROOT, 'openapi'), dir, { recursive: true });
    const file = path.join(dir, 'v1/openapi.yaml');
    const document = parse(readFileSync(file, 'utf8'));
    document.paths['/pets'].get.parameters[0].schema = { type: 'integer', minimum: 'one' };
    writeFileSync(file, stringify(document));
    const failed = startServer({ DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, OPENAPI_DIR: dir });
    await expect(failed).rejects.toThrow(
      /server exited with 1[\s\S]*GET \/pets \(listPets\): parameter limit: the schema at #\/paths\/~1pets\/get\/parameters\/0\/schema does not compile/,
    );
  });
});

describe('extensions that point at documentation files', () => {
  it('a root, components or operation x- extension with a $ref to a Markdown file beside the document: served, never a 500', async () => {
    const dir = path.join(tempDir(), 'openapi');
    cpSync(path.join(PROJECT_ROOT, 'openapi'), dir, { recursive: true });
    const file = path.join(dir, 'v1/openapi.yaml');
    const document = parse(readFileSync(file, 'utf8'));
    // As documentation publishers ship topics beside the document: resolved by their renderers, not by the server.
    document['x-topics'] = [{ title: 'Getting started', content: { $ref: './topics/getting-started.md' } }];
    document.components['x-guides'] = { $ref: './topics/guides.md' };
    document.paths['/pets'].post['x-codeSamples'] = { $ref: './topics/create-pet.md' };
    // Deeper too: on a parameter, and on a schema (beside a property named like an extension, which is a name and stays).
    document.paths['/pets'].get.parameters[0]['x-guide'] = { $ref: './topics/guides.md' };
    document.components.schemas.Pet['x-guide'] = { $ref: './topics/guides.md' };
    writeFileSync(file, stringify(document));
    mkdirSync(path.join(dir, 'v1/topics'));
    for (const name of ['getting-started', 'guides', 'create-pet']) writeFileSync(path.join(dir, `v1/topics/${name}.md`), `# ${name}\n`);
    // Started from another working directory, where ./topics/ does not exist.
    const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}`, OPENAPI_DIR: dir, CWD: tempDir(), VALIDATE_RESPONSES: 'true' };
    const server = await startServer(env);
    try {
      const key = createKeyWithCli(env, '--plan', 'free');
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
      const created = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Rex', categoryId: 1 }) });
      expect(created.status).toBe(201);
      const refused = await fetch(`${server.url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ categoryId: 1 }) });
      expect(refused.status).toBe(400);
      expect((await fetch(`${server.url}/v1/pets?limit=2`, { headers })).status).toBe(200);
      expect(server.output()).not.toMatch(/"level":50/);
    } finally {
      await server.stop();
    }
  });
});
