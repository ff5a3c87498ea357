/**
 * Checks an HTTP response against openapi/openapi.yaml: the operation is found
 * from method + path, its declared response for the status (or `default`)
 * gives the body schema and the required headers. Responses of routes outside
 * the contract must still be Error objects when they are errors.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { loadSpec, listOperations } from '../../src/contract/load-spec';
import { basePathOf } from '../../src/contract/base-path';
import { int64Format } from '../../src/contract/validator';

const spec = loadSpec();
const basePath = basePathOf(spec);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat('int64', int64Format);
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
ajv.addSchema(spec as object, 'openapi');

const routes = listOperations(spec).map((op) => ({
  ...op,
  pattern: new RegExp(`^${basePath}${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

const pointer = (ref: string): string => ref.replace(/^#/, '');
function resolve<T = Record<string, any>>(node: any): T {
  while (node && typeof node.$ref === 'string') {
    node = pointer(node.$ref)
      .split('/')
      .slice(1)
      .reduce((value: any, key) => value?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return node as T;
}

/** 400 request validation, 401 auth, 413/415 body, 429 limits, 501 a stub, 503 an outage. */
const FRAMEWORK_STATUSES = new Set([400, 401, 413, 415, 429, 501, 503]);

const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(ref: string): ReturnType<typeof ajv.compile> {
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#${ref}` });
    validators.set(ref, validate);
  }
  return validate;
}

/** A response as any HTTP client saw it (supertest, node:http, fetch). */
export interface ObservedResponse {
  method: string;
  /** The request target: path and query. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when none or not JSON). */
  body: any;
  /** The raw body text. */
  text: string;
}

/** Throws with a readable explanation when the supertest response breaks the contract. */
export function assertConformsToSpec(res: Response): void {
  assertResponseConforms({
    method: (res as any).req.method,
    url: (res as any).req.path,
    status: res.status,
    headers: res.headers,
    body: res.body,
    text: res.text,
  });
}

/**
 * Throws with a readable explanation when the response breaks the contract.
 *
 * @example assertResponseConforms({ method: 'GET', url: '/v1/pets', status: 200, headers, body, text });
 */
export function assertResponseConforms(res: ObservedResponse): void {
  const method = res.method.toLowerCase();
  const url = new URL(res.url, 'http://x').pathname;
  const where = `${method.toUpperCase()} ${url} -> ${res.status}`;
  const fail = (why: string): never => {
    throw new Error(`response breaks the contract: ${where}: ${why}\nbody: ${JSON.stringify(res.body)}`);
  };

  if (url === '/readyz') {
    // Operations endpoint outside the contract: a readiness report, 200 or 503.
    const body = res.body as { status?: unknown; checks?: Record<string, unknown> };
    const shapeOk =
      (res.status === 200 ? body.status === 'ready' : res.status === 503 && body.status === 'unavailable') &&
      typeof body.checks === 'object' &&
      Object.values(body.checks ?? {}).every((value) => typeof value === 'string');
    if (!shapeOk) fail('not a readiness report');
    return;
  }
  const route = routes.find((candidate) => candidate.pattern.test(url) && candidate.method === method);
  if (!route) {
    // Outside the contract (unknown route, wrong method, docs, health): errors are still Error objects.
    if (res.status >= 400) checkBody('/components/schemas/Error');
    return;
  }
  const responses = route.operation['responses'] as Record<string, unknown>;
  const declared = String(res.status) in responses ? String(res.status) : 'default';
  if (!(declared in responses)) {
    // Answers of the framework rather than the handler (validation, auth, limits,
    // stubs, outages) need not be declared: they are Error objects.
    if (!FRAMEWORK_STATUSES.has(res.status)) fail('status is not declared and there is no default response');
    checkBody('/components/schemas/Error');
    return;
  }
  const entry = responses[declared] as { $ref?: string };
  const response = resolve(entry);
  // Where the response object lives, so Ajv resolves its schema's $refs in place.
  const responseRef = entry.$ref ? pointer(entry.$ref) : `/paths/${escape(route.path)}/${method}/responses/${declared}`;

  for (const [name, header] of Object.entries<any>(response['headers'] ?? {})) {
    const definition = resolve(header);
    const value = res.headers[name.toLowerCase()];
    if (definition.required && value === undefined) fail(`required header ${name} is missing`);
    if (value !== undefined && definition.schema?.type === 'integer' && !/^\d+$/.test(String(value))) {
      fail(`header ${name}: "${value}" is not an integer`);
    }
  }
  const content = response['content'] as Record<string, unknown> | undefined;
  if (!content) {
    if (res.text) fail('no content is declared but the response has a body');
    return;
  }
  if (!String(res.headers['content-type']).startsWith('application/json')) fail(`content-type is ${res.headers['content-type']}`);
  checkBody(`${responseRef}/content/application~1json/schema`);

  function checkBody(schemaRef: string): void {
    if (!String(res.headers['content-type']).startsWith('application/json')) fail(`content-type is ${res.headers['content-type']}`);
    const validate = validatorFor(schemaRef);
    if (!validate(res.body)) fail(ajv.errorsText(validate.errors));
    if (res.status >= 400 && res.body.status !== res.status) fail(`body.status ${res.body.status} differs from the HTTP status`);
  }
}
