/**
 * Checks an HTTP response against the contract (every openapi/vN/openapi.yaml
 * by default) with an oracle that shares no code with the server: the
 * contract fuzzer's reading of the YAML (the toolchain's contract/spec.ts, plain
 * JSON Schemas) and its checks (the toolchain's contract/checks.ts: the status
 * declared, or `default`; required headers valid; the Content-Type declared;
 * the body valid against its schema with Ajv; every error an Error object
 * carrying its status), and a route matcher of its own here. A bug in the
 * server's route table or response rule cannot hide behind the same code in
 * the check. On top of it, rules for tests only: a response of a path the
 * contract does not match must still be an Error object when it is an error,
 * and a 2xx there must come from a public route; a 5xx fails unless the test
 * expects it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from './paths';
import { basePathOf, contractOf, type Contract, type Operation } from '@spec-first/toolchain';
import { checkResponse, schemaErrors } from '@spec-first/toolchain';

/** A parsed OpenAPI document (any object a test serves). */
type Document = object;

/** A served document and where it is served (`/v1`). */
export interface ServedContract {
  document: Document;
  basePath: string;
}

interface Route {
  operation: Operation;
  pattern: RegExp;
  /** Literal segments: a concrete path wins over a templated one (OpenAPI's rule). */
  literals: number;
}

interface Checker {
  contract: Contract;
  routes: Route[];
}

const checkers = new WeakMap<Document, Map<string, Checker>>();

/** Every major version's document as it is on disk (openapi/vN/openapi.yaml), served under /vN. */
const defaultContracts: ServedContract[] = readdirSync(path.join(PROJECT_ROOT, 'openapi'))
  .filter((name) => /^v\d+$/.test(name))
  .map((name) => ({ document: parse(readFileSync(path.join(PROJECT_ROOT, 'openapi', name, 'openapi.yaml'), 'utf8')) as Document, basePath: `/${name}` }));

/** A document handed alone is served where its `servers` say (the fuzzer reads them). */
const served = (contract: Document | ServedContract): ServedContract =>
  'document' in contract && 'basePath' in contract
    ? (contract as ServedContract)
    : { document: contract, basePath: basePathOf((contract as { servers?: Parameters<typeof basePathOf>[0] }).servers ?? []) };

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function checkerFor({ document, basePath }: ServedContract): Checker {
  let byBase = checkers.get(document);
  if (!byBase) {
    byBase = new Map();
    checkers.set(document, byBase);
  }
  let checker = byBase.get(basePath);
  if (!checker) {
    // contractOf reads a copy: the document a test serves is never changed.
    const contract = contractOf(document, basePath);
    const routes = contract.operations.map((operation): Route => {
      const segments = `${basePath}${operation.path}`.split('/').filter(Boolean);
      // The server's documented matching: case-insensitive, an optional trailing slash.
      const source = segments.map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : escapeRegExp(segment))).join('/');
      return { operation, pattern: new RegExp(`^/${source}/?$`, 'i'), literals: segments.filter((segment) => !segment.startsWith('{')).length };
    });
    checker = { contract, routes };
    byBase.set(basePath, checker);
  }
  return checker;
}

/** The operation a request reaches: the most concrete path that matches, then its method; undefined when none. */
function match(checker: Checker, method: string, url: string): Operation | undefined {
  const matching = checker.routes.filter((route) => route.pattern.test(url));
  if (matching.length === 0) return undefined;
  const best = Math.max(...matching.map((route) => route.literals));
  return matching.find((route) => route.literals === best && route.operation.method === method)?.operation;
}

/** Whether any operation's path matches (whatever its method). */
const knowsPath = (checker: Checker, url: string): boolean => checker.routes.some((route) => route.pattern.test(url));

/** The Error object every answer outside the contract's operations must be. */
const ERROR_OBJECT = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: { code: { type: 'string', minLength: 1 }, message: { type: 'string' }, status: { type: 'integer', minimum: 400, maximum: 599 } },
};

/** Routes outside the contract that answer 2xx (and HEAD's on them). */
const PUBLIC_ROUTES = [/^\/healthz\/?$/i, /^\/readyz\/?$/i, /^\/metrics\/?$/i, /^\/openapi(\/v\d+)?\.(yaml|json)$/i, /^\/docs(\/|$)/i];

/** Statuses the HTTP server answers itself, below the app: malformed HTTP, a missing Host, timeouts, oversized headers. */
const HTTP_SERVER_STATUSES = new Set([400, 408, 413, 431]);

/** An answer written by the HTTP server before the request reached the app: it closes the connection and carries no rate-limit headers. */
const refusedBelowTheApp = (res: ObservedResponse): boolean =>
  HTTP_SERVER_STATUSES.has(res.status) && String(res.headers['connection']).toLowerCase() === 'close' && res.headers['x-ratelimit-limit'] === undefined;

/** A response as any HTTP client saw it (supertest, node:http, fetch). */
export interface ObservedResponse {
  method: string;
  /** The request target: path and query. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when none or not JSON). */
  body: unknown;
  /** The raw body text. */
  text: string;
}

export interface ConformanceOptions {
  /** The documents the server serves (one per major version); every openapi/vN/openapi.yaml by default. */
  contract?: Document | ServedContract | ReadonlyArray<Document | ServedContract>;
  /** Statuses the test expects: a 5xx passes only when listed here. */
  expectedStatuses?: ReadonlySet<number>;
}

/**
 * Throws with a readable explanation when the response breaks the contract.
 *
 * @example assertResponseConforms({ method: 'GET', url: '/v1/pets', status: 200, headers, body, text });
 */
export function assertResponseConforms(res: ObservedResponse, options: ConformanceOptions = {}): void {
  const method = res.method.toUpperCase();
  const url = new URL(res.url, 'http://x').pathname;
  const contracts = options.contract === undefined ? defaultContracts : (Array.isArray(options.contract) ? options.contract : [options.contract]).map(served);
  // The version that knows the path, else the first for Error objects.
  const checker = checkerFor(contracts.find((candidate) => knowsPath(checkerFor(candidate), url)) ?? contracts[0]!);
  const where = `${method} ${url} -> ${res.status}`;
  const fail = (why: string): never => {
    const body = JSON.stringify(res.body) ?? '';
    throw new Error(`response breaks the contract: ${where}: ${why}\nbody: ${body.length > 2_000 ? `${body.slice(0, 2_000)}…` : body}`);
  };
  const headers = Object.fromEntries(
    Object.entries(res.headers)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)]),
  );
  /** Outside the contract's operations: an error is an Error object with its status and a request id. */
  const errorObject = (): void => {
    if (res.status < 400) return;
    const error = method === 'HEAD' ? undefined : schemaErrors(ERROR_OBJECT, res.body);
    if (error) fail(error);
    if (method !== 'HEAD' && (res.body as { status?: unknown }).status !== res.status) fail(`Error.status is not ${res.status}`);
    if (typeof headers['x-request-id'] !== 'string') fail('no X-Request-Id');
  };

  if (res.status >= 500 && !options.expectedStatuses?.has(res.status)) {
    fail('a server error the test does not expect (pin it with .expect(status) when the test is about it)');
  }
  if (refusedBelowTheApp(res)) {
    // The HTTP server's own refusal of bytes it could not take as a request
    // (src/runtime/http-server.ts): never routed, authenticated or counted, so
    // no operation's headers; still an Error object with a request id.
    errorObject();
    return;
  }
  if (/^\/readyz\/?$/i.test(url)) {
    // Operations endpoint outside the contract: a readiness report, 200 or 503.
    const body = res.body as { status?: unknown; checks?: Record<string, unknown> };
    const shapeOk =
      (res.status === 200 ? body.status === 'ready' : res.status === 503 && body.status === 'unavailable') &&
      typeof body.checks === 'object' &&
      Object.values(body.checks ?? {}).every((value) => typeof value === 'string');
    if (!shapeOk && method !== 'HEAD') fail('not a readiness report');
    return;
  }
  const operation = match(checker, method, url);
  if (!operation) {
    // Outside the contract (unknown route, undeclared method, docs, health), errors are still Error objects.
    errorObject();
    if (res.status < 400 && !PUBLIC_ROUTES.some((route) => route.test(url))) fail('a success for a request the contract does not declare');
    return;
  }
  // A binary body reaches supertest as a Buffer, with no text.
  const text = method === 'HEAD' ? '' : typeof res.text === 'string' ? res.text : Buffer.isBuffer(res.body) ? res.body.toString('latin1') : '';
  const failures = checkResponse(checker.contract, operation, { status: res.status, headers, text, durationMs: 0 }).filter(
    // 5xx are judged above (a test may expect one); a HEAD answer has no body to judge.
    (failure) => failure.check !== 'not_a_server_error' && !(method === 'HEAD' && failure.check === 'response_schema_conformance'),
  );
  if (failures.length > 0) fail(failures.map((failure) => `${failure.check}: expected ${failure.expected}, got ${failure.got}`).join('; '));
}
