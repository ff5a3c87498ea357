/**
 * What a larger contract costs per request in express-openapi-validator's
 * route lookup, and what the per-operation validator instances (one path
 * each, src/contract/validator.ts `operationValidator`) save. In process, fake
 * requests, no sockets: GET /v1/pets/1 validated by
 *
 *   whole document   one validator for the whole contract (its `lookupRoute`
 *                    compiles and tests every path per request: what the
 *                    project did before its compiled pipelines, and what the
 *                    unmatched-route fallback still does);
 *   one operation    the validator of getPet alone, as its pipeline runs it;
 *
 * with the contract as it is and with 50 and 200 extra paths added (named
 * `/a0/{id}`... so they sort before `/pets/{petId}` and are all scanned).
 *
 *   node --import tsx bench/route-lookup.ts [--requests 20000]
 */
import { parseArgs } from 'node:util';
import type { Request, RequestHandler, Response } from 'express';
import { contractValidator, operationValidator } from '../src/contract/validator';
import { listOperations, loadSpec, type OpenApiDocument } from '../src/contract/load-spec';
import { chain, fromMiddleware, type Stage } from '../src/pipeline/stage';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' } } });
const REQUESTS = Number(values.requests);

function withExtraPaths(spec: OpenApiDocument, extra: number): OpenApiDocument {
  const copy = structuredClone(spec);
  const paths: OpenApiDocument['paths'] = {};
  for (let i = 0; i < extra; i++) {
    paths[`/a${i}/{id}`] = {
      get: {
        operationId: `extra${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    };
  }
  copy.paths = { ...paths, ...copy.paths };
  return copy;
}

function fakeRequest(): { req: Request; res: Response } {
  const req = {
    method: 'GET',
    url: '/v1/pets/1',
    originalUrl: '/v1/pets/1',
    path: '/v1/pets/1',
    baseUrl: '',
    headers: { authorization: 'Bearer x', host: 'localhost' },
    params: {},
    query: {},
    app: { enabled: () => false, param: () => undefined },
  };
  return { req: req as unknown as Request, res: {} as Response };
}

async function time(stage: Stage): Promise<number> {
  for (let i = 0; i < 2_000; i++) {
    const { req, res } = fakeRequest();
    await stage(req, res);
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i++) {
    const { req, res } = fakeRequest();
    await stage(req, res);
  }
  return Number(process.hrtime.bigint() - start) / REQUESTS / 1000;
}

async function main(): Promise<void> {
  const spec = loadSpec();
  const rows: string[][] = [];
  for (const extra of [0, 50, 200]) {
    const document = withExtraPaths(spec, extra);
    const getPet = listOperations(document).find((op) => op.operationId === 'getPet')!;
    const whole = chain(contractValidator(document, '/v1', { validateResponses: false }).map((middleware: RequestHandler) => fromMiddleware(middleware)));
    const single = chain(operationValidator(document, '/v1', getPet, { validateResponses: false }));
    const medians = { whole: [] as number[], single: [] as number[] };
    for (let round = 0; round < 3; round++) {
      medians.whole.push(await time(whole));
      medians.single.push(await time(single));
    }
    const median = (list: number[]): number => list.sort((a, b) => a - b)[1]!;
    rows.push([String(Object.keys(document.paths).length), median(medians.whole).toFixed(1), median(medians.single).toFixed(1)]);
    console.log(`${rows.at(-1)![0]} paths: whole document ${rows.at(-1)![1]} µs, one operation ${rows.at(-1)![2]} µs per request`);
  }
  console.log('\n| paths in the contract | whole-document validator, µs/request | per-operation validator, µs/request |');
  console.log('|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

void main();
