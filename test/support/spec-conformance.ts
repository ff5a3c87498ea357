/**
 * Checks an HTTP response against the contract (openapi/v1/openapi.yaml by
 * default): the operation is found by the route table the server uses (one
 * matching rule: case-insensitive, optional trailing slash, the validator's
 * order), and the product's rule (src/contract/response-conformance.ts: the
 * declared response for the status, or `default`, gives the body schema and
 * the required headers) judges the response. On top of it, rules for tests
 * only: a response of a path the contract does not match must still be an
 * Error object when it is an error, and a 2xx there must come from a public
 * route; a 5xx fails unless the test expects it.
 */
import { PROJECT_ROOT } from '../../src/project';
import type { OpenApiDocument } from '../../src/engine/contract/document';
import { loadSpec } from './contracts';
import { routeTable, type RouteTable } from '../../src/engine/contract/route-table';
import { responseConformance, type ResponseCheck } from '../../src/engine/contract/response-conformance';
import { contractVersions } from '../../src/engine/contract/versions';

interface Checker {
  table: RouteTable;
  /** The product's rule for this contract (schemas checked with formats, as the server's mocks check them). */
  check: ResponseCheck;
}

/** A served document and where it is served (`/v1`). */
export interface ServedContract {
  document: OpenApiDocument;
  basePath: string;
}

const checkers = new WeakMap<OpenApiDocument, Checker>();
/** Every major version's document, as the server serves them (openapi/vN/ under /vN). */
const defaultContracts: ServedContract[] = contractVersions(PROJECT_ROOT).map((version) => ({ document: loadSpec(version.document), basePath: `/${version.name}` }));

/** A document handed alone is served where its `servers` say (their path, variables at their defaults). */
const served = (contract: OpenApiDocument | ServedContract): ServedContract => ('document' in contract && 'basePath' in contract ? (contract as ServedContract) : { document: contract as OpenApiDocument, basePath: serversPath(contract as OpenApiDocument) });

function serversPath(document: OpenApiDocument): string {
  const server = document.servers?.[0];
  if (!server) return '';
  const url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? '');
  return new URL(url, 'http://localhost').pathname.replace(/\/+$/, '');
}

function checkerFor({ document, basePath }: ServedContract): Checker {
  let checker = checkers.get(document);
  if (!checker) {
    checkers.set(document, (checker = { table: routeTable(document, basePath), check: responseConformance(document) }));
  }
  return checker;
}

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
  body: any;
  /** The raw body text. */
  text: string;
}

export interface ConformanceOptions {
  /** The documents the server serves (one per major version); every openapi/vN/openapi.yaml by default. */
  contract?: OpenApiDocument | ServedContract | ReadonlyArray<OpenApiDocument | ServedContract>;
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
  // The version whose route table matches the path (the server's own rule), else the first for Error objects.
  const contract = contracts.find((candidate) => checkerFor(candidate).table.match(method, url) !== undefined) ?? contracts[0]!;
  const { table, check } = checkerFor(contract);
  const where = `${method} ${url} -> ${res.status}`;
  const fail = (why: string): never => {
    const body = JSON.stringify(res.body) ?? '';
    throw new Error(`response breaks the contract: ${where}: ${why}\nbody: ${body.length > 2_000 ? `${body.slice(0, 2_000)}…` : body}`);
  };
  const conform = (operation: Parameters<ResponseCheck>[0]): void => {
    const [first] = check(operation, { method, status: res.status, headers: res.headers, body: res.body, text: res.text });
    if (first) fail(first.message);
  };

  if (res.status >= 500 && !options.expectedStatuses?.has(res.status)) {
    fail('a server error the test does not expect (pin it with .expect(status) when the test is about it)');
  }
  if (refusedBelowTheApp(res)) {
    // The HTTP server's own refusal of bytes it could not take as a request
    // (src/runtime/http-server.ts): never routed, authenticated or counted, so
    // no operation's headers; still an Error object with a request id.
    if (typeof res.headers['x-request-id'] !== 'string') fail('no X-Request-Id');
    conform(undefined);
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
  const operation = table.match(method, url)?.operation;
  // Outside the contract (unknown route, undeclared method, docs, health), errors are still Error objects.
  conform(operation);
  if (!operation && res.status < 400 && !PUBLIC_ROUTES.some((route) => route.test(url))) fail('a success for a request the contract does not declare');
}
