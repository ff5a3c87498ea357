import type { OpenApiDocument } from '@spec-first/engine';
import { startTestApp, type TestApp } from './support/test-app';

/**
 * A contract whose path item declares `petId` an integer (through a `$ref`)
 * and whose operation adds `operationParameters`; the handler echoes the
 * parameters it received.
 */
function contract(operationParameters: unknown[]): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/pets/{petId}': {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { $ref: '#/components/schemas/Id' } }],
        get: {
          operationId: 'getPet',
          parameters: operationParameters,
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'error' } },
        },
      },
    },
    components: { schemas: { Id: { type: 'integer' } } },
  } as unknown as OpenApiDocument;
}

async function serve(operationParameters: unknown[]): Promise<TestApp> {
  const echo = async (request: { params: unknown; query: unknown }) => ({ status: 200, body: { params: request.params, query: request.query } });
  return startTestApp({ versions: [{ name: 'v1', contract: contract(operationParameters), handlers: { getPet: echo } }] });
}

describe('integer path and query parameters are decimal digits (over HTTP)', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('checks the path item parameters and the operation parameters, through $ref', async () => {
    t = await serve([{ name: 'limit', in: 'query', schema: { type: 'integer' } }]);
    const ok = await t.api.get('/v1/pets/12?limit=-3').expect(200);
    expect(ok.body).toEqual({ params: { petId: 12 }, query: { limit: -3 } });
    expect((await t.api.get('/v1/pets/1e3').expect(400)).body.message).toBe('params.petId must be an integer written in decimal digits');
    expect((await t.api.get('/v1/pets/7?limit=0x10').expect(400)).body.message).toBe('query.limit must be an integer written in decimal digits');
    // No number at all, or a fraction: the schema's own "must be integer".
    expect((await t.api.get('/v1/pets/abc').expect(400)).body.message).toBe('params.petId must be integer');
    expect((await t.api.get('/v1/pets/7?limit=1.5').expect(400)).body.message).toBe('query.limit must be integer');
  });

  it('follows an operation parameter that replaces the path item one of the same name', async () => {
    t = await serve([{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }]);
    expect((await t.api.get('/v1/pets/1e3').expect(200)).body).toEqual({ params: { petId: '1e3' }, query: {} });
  });
});
