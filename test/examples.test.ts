/**
 * Every example in the contract validates against its schema (CI also runs
 * Redocly's no-invalid-*-examples rules through `npm run lint:api`), and mock
 * mode can answer every operation of the contract from it.
 */
import { PROJECT_ROOT } from '../src/project';
import { listOperations, contractVersions } from '@spec-first/engine/testing';
import { loadSpec } from './support/contracts';
import { objectAt } from './support/document-edits';
import { buildOperationMocks } from '@spec-first/engine/testing';
import { invalidExamples } from './support/example-check';

const spec = loadSpec();

describe('examples of openapi/v1/openapi.yaml', () => {
  it.each(contractVersions(PROJECT_ROOT).map((version) => [version.name, version.document]))(
    'every example of %s validates against its schema',
    (_name, document) => {
      expect(invalidExamples(loadSpec(document))).toEqual([]);
    },
  );

  it('the check finds an invalid media type, named, schema and parameter example', () => {
    const edited = structuredClone(spec);
    objectAt(edited, 'components', 'schemas', 'Pet').examples = [{ id: 1, name: 'Rex', categoryId: 1, status: 'adopted' }];
    objectAt(edited, 'paths', '/pets', 'get', 'responses', '200', 'content', 'application/json', 'examples', 'empty').value = {};
    objectAt(edited, 'components', 'responses', 'NotFound', 'content', 'application/json').example = { code: 'missing', message: 'x', status: 404 };
    objectAt(edited, 'paths', '/pets', 'get', 'parameters', 0).example = 500;
    expect(invalidExamples(edited)).toEqual([
      expect.stringMatching(/^\/paths\/~1pets\/get\/parameters\/0\/example: data must be <= 100/),
      expect.stringMatching(/^\/paths\/~1pets\/get\/responses\/200\/content\/application~1json\/examples\/empty: data must be array/),
      expect.stringMatching(/^\/components\/schemas\/Pet\/examples\/0: data\/status must be equal to one of the allowed values/),
      expect.stringMatching(/^\/components\/responses\/NotFound\/content\/application~1json\/example: data\/code must be equal/),
    ]);
  });

  it('mock mode can answer every operation of the contract (examples and generated samples are valid)', () => {
    const ids = listOperations(spec).map((op) => op.operationId);
    const mocks = buildOperationMocks(spec, ids);
    expect([...mocks.keys()]).toEqual(ids);
    expect(mocks.get('listPets')!.answer(undefined)).toMatchObject({
      status: 200,
      body: [
        { id: 1, name: 'Rex' },
        { id: 2, name: 'Misty' },
      ],
    });
    expect(mocks.get('getPet')!.answer('code=404')).toMatchObject({ status: 404, body: { code: 'not_found', status: 404 } });
    expect(mocks.get('listStoreOrders')!.answer(undefined)).toBeUndefined();
  });
});
