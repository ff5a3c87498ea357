/**
 * Reads an OpenAPI 3.1 document the way any client would: the YAML file and
 * nothing of the server's code, with every `$ref` replaced by what it points
 * to, so the rest of the fuzzer sees plain JSON Schemas.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it), `$ref`s resolved. */
export type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  [keyword: string]: unknown;
};

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  /**
   * `x-issued-by: server`: only values the server issued are valid (an opaque
   * page cursor); any value made up, schema-valid or not, is refused. Never
   * sent in a positive case; its made-up values are negative cases.
   */
  issuedByServer: boolean;
}

export interface ResponseHeader {
  required: boolean;
  schema: Schema;
}

export interface DeclaredResponse {
  headers: Record<string, ResponseHeader>;
  /** Media type -> body schema; empty when the response has no body. */
  content: Record<string, Schema | undefined>;
}

export interface Operation {
  operationId: string;
  /** Upper-case HTTP method. */
  method: string;
  /** Path template relative to the base URL, e.g. `/pets/{petId}`. */
  path: string;
  parameters: Parameter[];
  /** The JSON request body, when the operation takes one. */
  body?: { required: boolean; mediaTypes: string[]; schema: Schema };
  /** Declared responses by status code (`200`, `4XX`, `default`). */
  responses: Record<string, DeclaredResponse>;
  /** Whether a key is required (a non-empty `security` applies). */
  secured: boolean;
}

export interface Contract {
  /** The path every operation is under, from the document's `servers` (variables at their defaults), e.g. `/v2`; '' without servers. */
  basePath: string;
  operations: Operation[];
  /** `components.schemas.Error` when the document has one: the body of every error. */
  errorSchema?: Schema;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Replaces every `$ref` (local, `#/...`) by a copy of its target; keywords next
 * to a `$ref` (OpenAPI 3.1 allows `description`, `default`...) win over the target's.
 */
function dereference(document: unknown): unknown {
  const lookup = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<any>((node, key) => {
        if (node === undefined || !(key in node)) throw new Error(`unresolvable $ref ${ref}`);
        return node[key];
      }, document);
  };
  const walk = (node: unknown, depth: number): unknown => {
    if (depth > 64) throw new Error('$ref nesting deeper than 64 (recursive schema?)');
    if (Array.isArray(node)) return node.map((item) => walk(item, depth));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, ...siblings } = node as Record<string, unknown>;
    const resolved: Record<string, unknown> = {};
    if (typeof $ref === 'string') Object.assign(resolved, walk(lookup($ref), depth + 1) as object);
    for (const [key, value] of Object.entries(siblings)) resolved[key] = walk(value, depth);
    return resolved;
  };
  return walk(document, 0);
}

function responseOf(raw: any): DeclaredResponse {
  const headers: Record<string, ResponseHeader> = {};
  for (const [name, header] of Object.entries<any>(raw?.headers ?? {})) {
    headers[name] = { required: header.required === true, schema: header.schema ?? {} };
  }
  const content: Record<string, Schema | undefined> = {};
  for (const [mediaType, media] of Object.entries<any>(raw?.content ?? {})) content[mediaType] = media?.schema;
  return { headers, content };
}

/**
 * Loads the contract from a YAML (or JSON) file.
 *
 * @example const { operations } = loadContract('openapi/v1/openapi.yaml'); operations[0].operationId // 'listPets'
 */
export function loadContract(file: string): Contract {
  const document = dereference(parse(readFileSync(file, 'utf8'))) as any;
  const globalSecurity: unknown[] = document.security ?? [];
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      // Operation parameters override path-level ones with the same name and location.
      const byKey = new Map<string, any>();
      for (const parameter of [...(item.parameters ?? []), ...(raw.parameters ?? [])]) {
        byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      }
      const json = Object.entries<any>(raw.requestBody?.content ?? {}).find(([type]) => /^application\/(.+\+)?json/.test(type));
      const responses: Record<string, DeclaredResponse> = {};
      for (const [status, response] of Object.entries<any>(raw.responses ?? {})) responses[status] = responseOf(response);
      operations.push({
        operationId: raw.operationId ?? `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: [...byKey.values()].map((parameter) => ({
          name: parameter.name,
          in: parameter.in,
          required: parameter.in === 'path' || parameter.required === true,
          schema: parameter.schema ?? {},
          issuedByServer: parameter['x-issued-by'] === 'server',
        })),
        ...(json && {
          body: {
            required: raw.requestBody.required === true,
            mediaTypes: Object.keys(raw.requestBody.content),
            schema: json[1].schema ?? {},
          },
        }),
        responses,
        secured: (raw.security ?? globalSecurity).some((requirement: object) => Object.keys(requirement).length > 0),
      });
    }
  }
  return { basePath: basePathOf(document.servers ?? []), operations, errorSchema: document.components?.schemas?.Error };
}

/** The path of the servers' URLs (`https://api.example/v2` -> `/v2`); they must agree. */
function basePathOf(servers: Array<{ url: string; variables?: Record<string, { default: string }> }>): string {
  const paths = new Set(
    servers.map((server) => {
      const url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? '');
      return new URL(url, 'http://localhost').pathname.replace(/\/+$/, '');
    }),
  );
  if (paths.size > 1) throw new Error(`the servers of the contract disagree on the base path: ${[...paths].join(', ')}`);
  return [...paths][0] ?? '';
}

/**
 * The URL the operations' paths are appended to: `baseUrl` with the
 * contract's base path added when it has no path of its own, else as given,
 * which must end with that base path (so one version's contract is not
 * checked against another's routes).
 *
 * @example resolveBaseUrl('http://127.0.0.1:3000', '/v2')       // 'http://127.0.0.1:3000/v2'
 * @example resolveBaseUrl('https://gw.example/api/v2', '/v2')   // 'https://gw.example/api/v2'
 * @example resolveBaseUrl('http://127.0.0.1:3000/v1', '/v2')    // throws: the URL ends in /v1, the contract is served under /v2
 */
export function resolveBaseUrl(baseUrl: string, basePath: string): string {
  const url = new URL(baseUrl);
  const given = url.pathname.replace(/\/+$/, '');
  if (given === '') {
    url.pathname = basePath;
    return url.toString().replace(/\/+$/, '');
  }
  if (basePath !== '' && !given.endsWith(basePath)) {
    throw new Error(`--base-url ${baseUrl} ends in ${given}, but the contract is served under ${basePath}: give the server's address without a path, or ending in ${basePath}`);
  }
  return baseUrl.replace(/\/+$/, '');
}

/**
 * The declared response for a status: exact code, then `4XX`-style range, then `default`.
 *
 * @example declaredResponse(listPets, 404) // the `default` response
 */
export function declaredResponse(operation: Operation, status: number): DeclaredResponse | undefined {
  return operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses['default'];
}

/** Whether a status is declared for the operation by its code or range (not by `default`). */
export function isExplicitlyDeclared(operation: Operation, status: number): boolean {
  return String(status) in operation.responses || `${String(status)[0]}XX` in operation.responses;
}
