/**
 * Reads an OpenAPI 3.0 or 3.1 document the way any client would: the YAML
 * (a document split across files bundled first, with Redocly's bundler) and
 * nothing of the server's code, with every `$ref` replaced by what it points
 * to and 3.0's schema dialect written as JSON Schema 2020-12 (`nullable`,
 * boolean exclusive bounds, `example`), so the rest of the fuzzer sees plain
 * JSON Schemas.
 */
import { holdsNames, isExtension, loadDocument, readBundledContract } from '@spec-first/engine/testing';

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
  in: 'path' | 'query' | 'querystring' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  /** 3.2's `in: querystring`: the media type the whole query string is written in (JSON, or form fields). */
  mediaType?: string;
  /** How the value is written (OpenAPI's defaults: form for query and cookie, simple for path and header). */
  style: string;
  explode: boolean;
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
  /** The request body, when the operation takes one: sent in `mediaType` (JSON when declared, else the first other media type served; XML is not). */
  body?: { required: boolean; mediaTypes: string[]; mediaType: string; kind: BodyKind; schema: Schema };
  /** Declared responses by status code (`200`, `4XX`, `default`). */
  responses: Record<string, DeclaredResponse>;
  /** The security requirements in force (OR), each the schemes it needs (AND); empty: anyone. */
  security: SecurityScheme[][];
  /** Whether callers must identify (every requirement names a scheme). */
  secured: boolean;
}

/** How a body is written: `items` is a stream of JSON values (JSON Lines, JSON text sequences), its schema the array they form. */
export type BodyKind = 'json' | 'items' | 'form' | 'multipart' | 'text' | 'binary';

/** The sequential JSON media types a request body is sent in as items. */
export const ITEM_MEDIA_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/x-jsonlines', 'application/jsonlines', 'application/json-seq'];

/** A security scheme, as a client presents credentials for it. */
export interface SecurityScheme {
  name: string;
  type: string;
  /** `http`: bearer or basic. */
  scheme?: string;
  /** `apiKey`: header, query or cookie, and its name. */
  in?: string;
  parameter?: string;
}

export interface Contract {
  /** The path every operation is under, from the document's `servers` (variables at their defaults), e.g. `/v2`; '' without servers. */
  basePath: string;
  operations: Operation[];
  /** `components.schemas.Error` when the document has one: the body of every error. */
  errorSchema?: Schema;
  /** Some response declares `application/problem+json`: errors may be answered as problem details when asked for. */
  offersProblems: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The members of a dereferenced OpenAPI document read here, as the document
 * declares them (nothing is checked: a member may be missing).
 */
interface RawDocument {
  openapi?: unknown;
  security?: Array<Record<string, string[]>>;
  servers?: Parameters<typeof basePathOf>[0];
  components?: { securitySchemes?: Record<string, RawSecurityScheme>; schemas?: Record<string, Schema> };
  paths?: Record<string, RawPathItem>;
}

type RawPathItem = { [method in (typeof METHODS)[number]]?: RawOperation } & { parameters?: RawParameter[] };

interface RawOperation {
  operationId?: string;
  parameters?: RawParameter[];
  requestBody?: { required?: unknown; content: Record<string, RawMediaType | undefined> };
  responses?: Record<string, RawResponse | undefined>;
  security?: Array<Record<string, string[]>>;
}

interface RawParameter {
  name: string;
  in: Parameter['in'];
  required?: unknown;
  schema?: Schema;
  content?: Record<string, RawMediaType | undefined>;
  style?: string;
  explode?: boolean;
  'x-issued-by'?: unknown;
}

interface RawResponse {
  headers?: Record<string, { required?: unknown; schema?: Schema }>;
  content?: Record<string, RawMediaType | undefined>;
}

interface RawMediaType {
  schema?: Schema;
  itemSchema?: Schema;
}

interface RawSecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
}

/**
 * Replaces every `$ref` (local, `#/...`) by a copy of its target; keywords next
 * to a `$ref` (OpenAPI 3.1 allows `description`, `default`...) win over the target's.
 * Extensions are kept as written: a `$ref` there (a documentation topic beside
 * the document) is for the tool that reads that extension.
 */
function dereference(document: unknown): unknown {
  const lookup = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => {
        if (node === undefined || !(key in (node as object))) throw new Error(`unresolvable $ref ${ref}`);
        return (node as Record<string, unknown>)[key];
      }, document);
  };
  const walk = (node: unknown, depth: number, isNameMap = false): unknown => {
    if (depth > 64) throw new Error('$ref nesting deeper than 64 (recursive schema?)');
    if (Array.isArray(node)) return node.map((item) => walk(item, depth));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, ...siblings } = node as Record<string, unknown>;
    const resolved: Record<string, unknown> = {};
    if (typeof $ref === 'string') Object.assign(resolved, walk(lookup($ref), depth + 1) as object);
    for (const [key, value] of Object.entries(siblings)) resolved[key] = isExtension(key, isNameMap) ? value : walk(value, depth, holdsNames(key, isNameMap));
    return resolved;
  };
  return walk(document, 0);
}

/**
 * OpenAPI 3.0's schema dialect as JSON Schema 2020-12, in place on a
 * dereferenced document's schemas: `nullable: true` adds `null` to the type
 * (and the enum), boolean `exclusiveMinimum`/`exclusiveMaximum` become the
 * numbers, `example` becomes `examples`.
 */
function as2020(schema: unknown, seen = new Set<object>()): void {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if (Array.isArray(schema)) {
    for (const item of schema) as2020(item, seen);
    return;
  }
  const node = schema as Schema;
  if (node['nullable'] === true) {
    if (typeof node.type === 'string') node.type = [node.type, 'null'];
    if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
    delete node['nullable'];
  }
  for (const [bound, exclusive] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    if (typeof node[exclusive] === 'boolean') {
      if (node[exclusive] === true && typeof node[bound] === 'number') {
        (node as Record<string, unknown>)[exclusive] = node[bound];
        delete node[bound];
      } else delete node[exclusive];
    }
  }
  if ('example' in node && node.examples === undefined) node.examples = [node['example']];
  for (const value of Object.values(node)) as2020(value, seen);
}

/**
 * A schema as one direction sees it (OpenAPI): a request never carries a
 * `readOnly` property, a response never a `writeOnly` one, so such a
 * property is left out there, required or not.
 */
function directional(schema: Schema, leftOut: 'readOnly' | 'writeOnly', seen = new Map<object, Schema>()): Schema {
  if (schema === null || typeof schema !== 'object') return schema;
  const known = seen.get(schema);
  if (known) return known;
  const copy: Schema = Array.isArray(schema) ? ([] as unknown as Schema) : {};
  seen.set(schema, copy);
  for (const [key, value] of Object.entries(schema)) {
    (copy as Record<string, unknown>)[key] = value !== null && typeof value === 'object' ? directional(value as Schema, leftOut, seen) : value;
  }
  if (!Array.isArray(schema) && schema.properties) {
    const kept = Object.entries(copy.properties!).filter(([, property]) => property?.[leftOut] !== true);
    copy.properties = Object.fromEntries(kept);
    if (copy.required) copy.required = copy.required.filter((name) => kept.some(([kept]) => kept === name));
  }
  return copy;
}

const isJson = (mediaType: string): boolean => /^application\/(.+\+)?json$/i.test(mediaType.split(';')[0]!.trim());

function bodyKindOf(mediaType: string): BodyKind | 'xml' {
  const essence = mediaType.split(';')[0]!.trim().toLowerCase();
  if (isJson(essence)) return 'json';
  if (ITEM_MEDIA_TYPES.includes(essence)) return 'items';
  if (/[/+]xml$/.test(essence)) return 'xml';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  if (essence === 'multipart/form-data') return 'multipart';
  if (essence.startsWith('text/')) return 'text';
  return 'binary';
}

function responseOf(raw: RawResponse | undefined): DeclaredResponse {
  const headers: Record<string, ResponseHeader> = {};
  for (const [name, header] of Object.entries(raw?.headers ?? {})) {
    headers[name] = { required: header.required === true, schema: header.schema ?? {} };
  }
  const content: Record<string, Schema | undefined> = {};
  for (const [mediaType, media] of Object.entries(raw?.content ?? {})) {
    // A stream's items (3.2 `itemSchema`) are checked as the list they form: an array of that schema.
    const schema = media?.itemSchema !== undefined ? ({ type: 'array', items: media.itemSchema } as Schema) : media?.schema;
    content[mediaType] = schema && directional(schema, 'writeOnly');
  }
  return { headers, content };
}

/**
 * Loads the contract from a YAML (or JSON) file whose `$ref`s are all local.
 *
 * @example const { operations } = loadContract('openapi/v1/openapi.yaml'); operations[0].operationId // 'listPets'
 */
export function loadContract(file: string): Contract {
  return contractOf(readBundledContract(file));
}

/**
 * Loads the contract from a document that may reference other files
 * (bundled first), served under `basePath` (the server serves
 * `openapi/vN` under `/vN`) or, without one, its `servers`' path.
 *
 * @example const contract = await loadBundledContract('openapi/v3/openapi.yaml', '/v3');
 */
export async function loadBundledContract(file: string, basePath?: string): Promise<Contract> {
  // The server's own loader: the fuzzer reads a document exactly as the server it checks does.
  return contractOf(await loadDocument(file), basePath);
}

/** The contract of a parsed document. */
export function contractOf(parsed: unknown, basePath?: string): Contract {
  const document = dereference(parsed) as RawDocument;
  if (String(document.openapi).startsWith('3.0')) as2020(document);
  const globalSecurity: Array<Record<string, string[]>> = document.security ?? [];
  const schemes: Record<string, RawSecurityScheme | undefined> = document.components?.securitySchemes ?? {};
  const operations: Operation[] = [];
  for (const [route, item] of Object.entries(document.paths ?? {})) {
    // `/path#variant`: no request can reach it (the server refuses it by name).
    if (/[#?]/.test(route)) continue;
    // 3.2: the QUERY method and `additionalOperations` (any other method), each an operation like the rest.
    const is32 = String(document.openapi).startsWith('3.2');
    const additional = is32 ? ((item as { additionalOperations?: Record<string, RawOperation | undefined> }).additionalOperations ?? {}) : {};
    const entries: Array<[string, RawOperation | undefined]> = [
      ...METHODS.map((method): [string, RawOperation | undefined] => [method, item[method]]),
      ...(is32 ? [['query', (item as { query?: RawOperation }).query] as [string, RawOperation | undefined]] : []),
      ...Object.entries(additional).map(([method, operation]): [string, RawOperation | undefined] => [method.toLowerCase(), operation]),
    ];
    for (const [method, raw] of entries) {
      if (!raw) continue;
      // Operation parameters override path-level ones with the same name and location.
      const byKey = new Map<string, RawParameter>();
      for (const parameter of [...(item.parameters ?? []), ...(raw.parameters ?? [])]) {
        byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      }
      const content = Object.entries(raw.requestBody?.content ?? {}).filter(([type]) => bodyKindOf(type) !== 'xml');
      const chosen = content.find(([type]) => isJson(type)) ?? content[0];
      const responses: Record<string, DeclaredResponse> = {};
      for (const [status, response] of Object.entries(raw.responses ?? {})) responses[status] = responseOf(response);
      const requirements: Array<Record<string, string[]>> = raw.security ?? globalSecurity;
      const security = requirements.map((requirement) =>
        Object.keys(requirement).map((name): SecurityScheme => {
          const declared: Partial<RawSecurityScheme> = schemes[name] ?? {};
          return {
            name,
            type: declared.type as string,
            ...(declared.scheme && { scheme: String(declared.scheme).toLowerCase() }),
            ...(declared.in && { in: declared.in, parameter: declared.name }),
          };
        }),
      );
      operations.push({
        operationId: raw.operationId ?? `${method.toUpperCase()} ${route}`,
        method: method.toUpperCase(),
        path: route,
        parameters: [...byKey.values()].map((parameter) => {
          const style = parameter.style ?? (parameter.in === 'query' || parameter.in === 'cookie' ? 'form' : 'simple');
          return {
            name: parameter.name,
            in: parameter.in,
            required: parameter.in === 'path' || parameter.required === true,
            schema: parameter.schema ?? Object.values(parameter.content ?? {})[0]?.schema ?? {},
            ...(parameter.in === 'querystring' && { mediaType: Object.keys(parameter.content ?? {})[0] ?? 'application/x-www-form-urlencoded' }),
            style,
            explode: parameter.explode ?? style === 'form',
            issuedByServer: parameter['x-issued-by'] === 'server',
          };
        }),
        ...(chosen && {
          body: {
            required: raw.requestBody!.required === true,
            mediaTypes: Object.keys(raw.requestBody!.content),
            mediaType: chosen[0],
            kind: bodyKindOf(chosen[0]) as BodyKind,
            // A stream's items (3.2 `itemSchema`) are generated as the list they form.
            schema: directional(
              chosen[1]?.itemSchema !== undefined ? ({ type: 'array', items: chosen[1].itemSchema } as Schema) : (chosen[1]?.schema ?? {}),
              'readOnly',
            ),
          },
        }),
        responses,
        security: security.filter((requirement) => requirement.length > 0),
        secured: requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0),
      });
    }
  }
  return {
    basePath: basePath ?? basePathOf(document.servers ?? []),
    operations,
    errorSchema: document.components?.schemas?.Error,
    offersProblems: operations.some((operation) =>
      Object.values(operation.responses).some((response) => 'application/problem+json' in (response.content ?? {})),
    ),
  };
}

/** The path of the servers' URLs (`https://api.example/v2` -> `/v2`); they must agree. */
export function basePathOf(servers: Array<{ url: string; variables?: Record<string, { default: string }> }>): string {
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
    throw new Error(
      `--base-url ${baseUrl} ends in ${given}, but the contract is served under ${basePath}: give the server's address without a path, or ending in ${basePath}`,
    );
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
