import type { Request, Response } from 'express';
import type { OpenApiDocument, SpecOperation } from '../src/engine/contract/document';
import { decimalIntegerParameters } from '../src/engine/request/integer-parameters';

/** A contract whose path item declares `petId` an integer and `tag` a string query parameter. */
function contract(operationParameters: unknown[]): { spec: OpenApiDocument; op: SpecOperation } {
  const operation = { operationId: 'getPet', parameters: operationParameters, responses: { '200': { description: 'ok' } } };
  const spec = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/pets/{petId}': {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        get: operation,
      },
    },
    components: { schemas: { Id: { type: 'integer' } } },
  } as unknown as OpenApiDocument;
  return { spec, op: { operationId: 'getPet', method: 'get', path: '/pets/{petId}', operation } as unknown as SpecOperation };
}

const request = (params: Record<string, string>, query: Record<string, string> = {}): Request => ({ params, query }) as unknown as Request;
const run = (stage: ReturnType<typeof decimalIntegerParameters>, req: Request): unknown => {
  try {
    stage!(req, {} as Response);
    return 'passed';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('decimalIntegerParameters (integer path and query parameters are decimal digits)', () => {
  it('checks the path item parameters and the operation parameters, through $ref', () => {
    const { spec, op } = contract([{ name: 'limit', in: 'query', schema: { type: 'integer' } }]);
    const stage = decimalIntegerParameters(spec, op);
    expect(run(stage, request({ petId: '12' }, { limit: '-3' }))).toBe('passed');
    expect(run(stage, request({ petId: '1e3' }))).toBe('params.petId must be an integer written in decimal digits');
    expect(run(stage, request({ petId: '7' }, { limit: '0x10' }))).toBe('query.limit must be an integer written in decimal digits');
    // No number at all, or a fraction: the validator's own "must be integer".
    expect(run(stage, request({ petId: 'abc' }, { limit: '1.5' }))).toBe('passed');
  });

  it('follows an operation parameter that replaces the path item one of the same name', () => {
    const { spec, op } = contract([{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(decimalIntegerParameters(spec, op)).toBeUndefined();
  });
});
