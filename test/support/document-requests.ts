/**
 * Requests built from an OpenAPI document the way a client reads it, with
 * nothing of the server's code: the operations, a valid value for each
 * schema, each parameter serialized by its style, credentials presented as
 * each security scheme says, and an independent Ajv check of what comes back.
 * The third-party documents' suite drives servers with it.
 */
import path from 'node:path';
import { bundle, createConfig } from '@redocly/openapi-core';
import Ajv2020 from 'ajv/dist/2020';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

/*
 * The members of a dereferenced document read here, typed as OpenAPI declares
 * them. Documents are data of any shape: nothing is checked, any member may be
 * missing, and the others are there as `unknown`.
 */

/** A schema (JSON Schema 2020-12 for 3.1, OpenAPI's dialect of draft-04 for 3.0). */
export interface Schema {
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  /** A number in 3.1, a boolean beside `minimum` in 3.0. */
  exclusiveMinimum?: number | boolean;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  readOnly?: boolean;
  writeOnly?: boolean;
  contentMediaType?: string;
  contentEncoding?: string;
  [keyword: string]: unknown;
}

/** A media type of a request body, a response or a parameter's `content`. */
export interface MediaType {
  schema?: Schema;
  [member: string]: unknown;
}

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  content?: Record<string, MediaType>;
  style?: string;
  explode?: boolean;
  example?: unknown;
  [member: string]: unknown;
}

export interface ResponseObject {
  content?: Record<string, MediaType>;
  [member: string]: unknown;
}

export interface OperationObject {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, MediaType>; [member: string]: unknown };
  responses?: Record<string, ResponseObject>;
  security?: SecurityRequirement[];
  [member: string]: unknown;
}

/** `{ schemeName: [scopes] }`. */
export type SecurityRequirement = Record<string, string[]>;

export interface SecurityScheme {
  type?: string;
  /** `http`: bearer or basic. */
  scheme?: string;
  /** `apiKey`: where it is carried, and its name. */
  in?: string;
  name?: string;
  /** `oauth2`: its flows and their scopes. */
  flows?: Record<string, { scopes?: Record<string, string>; [member: string]: unknown }>;
  [member: string]: unknown;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export type PathItem = { [method in (typeof METHODS)[number]]?: OperationObject } & { parameters?: Parameter[]; [member: string]: unknown };

export interface Document {
  openapi?: string;
  paths?: Record<string, PathItem>;
  security?: SecurityRequirement[];
  components?: { securitySchemes?: Record<string, SecurityScheme>; [member: string]: unknown };
  [member: string]: unknown;
}

/** What `fetch` sends as a body here. */
export type RequestBody = string | Blob | FormData;

/** One operation of a dereferenced document. */
export interface DocumentOperation {
  method: string;
  path: string;
  /** The operationId, or `METHOD path`. */
  name: string;
  operation: OperationObject;
  parameters: Parameter[];
}

/** The document with every `$ref` (local and external) replaced by what it points to. */
export async function dereferencedDocument(file: string): Promise<Document> {
  const result = await bundle({ ref: path.resolve(file), config: await createConfig({}), dereference: true });
  return result.bundle.parsed as Document;
}

/** Every operation a client can call (paths with a fragment or query cannot be requested). */
export function operationsOf(document: Document): DocumentOperation[] {
  const is32 = String(document['openapi']).startsWith('3.2');
  return Object.entries(document['paths'] ?? {}).flatMap(([route, item]) => {
    if (/[#?]/.test(route)) return [];
    // 3.2: the QUERY method and additionalOperations (any other method) are operations too.
    const extra = item as { query?: OperationObject; additionalOperations?: Record<string, OperationObject> };
    const entries: Array<[string, OperationObject]> = [
      ...METHODS.filter((method) => item[method]).map((method): [string, OperationObject] => [method, item[method]!]),
      ...(is32 && extra.query ? [['query', extra.query] as [string, OperationObject]] : []),
      ...(is32
        ? Object.entries(extra.additionalOperations ?? {}).map(([method, operation]): [string, OperationObject] => [method.toLowerCase(), operation])
        : []),
    ];
    return entries.map(([method, operation]) => {
      const own = operation.parameters ?? [];
      const inherited = (item.parameters ?? []).filter((p) => !own.some((o) => o['name'] === p['name'] && o['in'] === p['in']));
      return { method, path: route, name: operation.operationId ?? `${method.toUpperCase()} ${route}`, operation, parameters: [...inherited, ...own] };
    });
  });
}

/** The security requirements in force (OR of ANDs); `[]` or a `{}` among them admits anyone. */
export function requirementsOf(document: Document, op: DocumentOperation): SecurityRequirement[] {
  return op.operation['security'] ?? document['security'] ?? [];
}

export const isAnonymousAllowed = (requirements: Array<Record<string, string[]>>): boolean =>
  requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0);

/** A value the schema accepts: its example, default, first enum value, else one built from its type and bounds. */
export function sampleOf(schema: Schema | undefined, direction: 'request' | 'response' = 'request', depth = 0): unknown {
  if (!schema || depth > 8) return 'x';
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'].find((value: unknown) => value !== null) ?? schema['enum'][0];
  if (schema['allOf']) return Object.assign({}, ...schema['allOf'].map((part: Schema) => sampleOf(part, direction, depth + 1)));
  const alternatives = schema['oneOf'] ?? schema['anyOf'];
  if (alternatives) return sampleOf(alternatives[0], direction, depth + 1);
  if (schema['default'] !== undefined) return schema['default'];
  const type = Array.isArray(schema['type'])
    ? schema['type'].find((t: string) => t !== 'null')
    : (schema['type'] ?? (schema['properties'] ? 'object' : schema['items'] ? 'array' : 'string'));
  switch (type) {
    case 'integer':
    case 'number': {
      // 3.1's exclusiveMinimum is a number; 3.0's a boolean beside minimum.
      const exclusive = schema['exclusiveMinimum'];
      const low = typeof exclusive === 'number' ? exclusive + 1 : (schema['minimum'] ?? 1) + (exclusive === true ? 1 : 0);
      return Math.ceil(low);
    }
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Math.max(1, schema['minItems'] ?? 1) }, () => sampleOf(schema['items'], direction, depth + 1));
    case 'object': {
      const skipped = direction === 'request' ? 'readOnly' : 'writeOnly';
      const properties = Object.entries(schema['properties'] ?? {}).filter(
        ([name, property]) => !property[skipped] && (schema['required']?.includes(name) || depth === 0),
      );
      return Object.fromEntries(properties.map(([name, property]) => [name, sampleOf(property, direction, depth + 1)]));
    }
    default:
      return stringSample(schema);
  }
}

function stringSample(schema: Schema): string {
  const byFormat: Record<string, string> = {
    'date-time': '2026-01-02T03:04:05Z',
    date: '2026-01-02',
    email: 'someone@example.com',
    uuid: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    uri: 'https://example.com/',
    url: 'https://example.com/',
    hostname: 'example.com',
    ipv4: '192.0.2.1',
  };
  const text = byFormat[String(schema['format'])] ?? (schema['examples']?.[0] as string | undefined) ?? (schema['example'] as string | undefined) ?? 'sample';
  const min = schema['minLength'] ?? 0;
  return String(text).padEnd(min, 'x');
}

/** A parameter's value in its request form, per its style and explode (OpenAPI's serialization table). */
export function serializeParameter(parameter: Parameter, value: unknown): { query?: string; path?: string; header?: string; cookie?: string } {
  const name = parameter['name'];
  const where = parameter['in'];
  const style = parameter['style'] ?? (where === 'query' || where === 'cookie' ? 'form' : 'simple');
  const explode = parameter['explode'] ?? style === 'form';
  const e = encodeURIComponent;
  const entries = (object: object): Array<[string, string]> => Object.entries(object).map(([k, v]) => [k, String(v)]);
  if (where === 'query' || where === 'cookie') {
    if (Array.isArray(value)) {
      const separators: Record<string, string> = { form: ',', spaceDelimited: '%20', pipeDelimited: '|' };
      const separator = separators[style] ?? ',';
      const pairs = explode ? value.map((item) => `${e(name)}=${e(String(item))}`) : [`${e(name)}=${value.map((item) => e(String(item))).join(separator)}`];
      return { [where]: pairs.join(where === 'query' ? '&' : '; ') };
    }
    if (value !== null && typeof value === 'object') {
      if (style === 'deepObject')
        return {
          query: entries(value)
            .map(([k, v]) => `${e(name)}%5B${e(k)}%5D=${e(v)}`)
            .join('&'),
        };
      const pairs = explode ? entries(value).map(([k, v]) => `${e(k)}=${e(v)}`) : [`${e(name)}=${entries(value).flat().map(e).join(',')}`];
      return { [where]: pairs.join(where === 'query' ? '&' : '; ') };
    }
    return { [where]: `${e(name)}=${e(String(value))}` };
  }
  // path and header: simple, label, matrix
  const items = Array.isArray(value)
    ? value.map((item) => e(String(item)))
    : value !== null && typeof value === 'object'
      ? explode
        ? entries(value).map(([k, v]) => `${e(k)}=${e(v)}`)
        : entries(value).flat().map(e)
      : [e(String(value))];
  let text: string;
  if (style === 'label') text = `.${items.join(explode ? '.' : ',')}`;
  else if (style === 'matrix') {
    if (Array.isArray(value) && explode) text = items.map((item) => `;${name}=${item}`).join('');
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && explode) text = items.map((item) => `;${item}`).join('');
    else text = `;${name}=${items.join(',')}`;
  } else text = items.join(',');
  return where === 'header' ? { header: decodeURIComponent(text) } : { path: text };
}

/** How a client presents credentials. */
export interface Credentials {
  apiKey: string;
  /** An access token for oauth2 / openIdConnect schemes; none when the issuer is not part of the test. */
  token?: string;
}

/** A request about to be sent: everything `fetch` needs. */
export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: RequestBody;
}

/** Applies one requirement (AND of schemes) to a request; false when a scheme cannot be satisfied with these credentials. */
export function present(
  document: Document,
  requirement: Record<string, string[]>,
  credentials: Partial<Credentials>,
  request: { headers: Record<string, string>; query: string[]; cookies: string[] },
): boolean {
  for (const name of Object.keys(requirement)) {
    const scheme = document['components']?.['securitySchemes']?.[name];
    if (!scheme) return false;
    if (scheme['type'] === 'http' && String(scheme['scheme']).toLowerCase() === 'bearer') {
      if (!credentials.apiKey) return false;
      request.headers['authorization'] = `Bearer ${credentials.apiKey}`;
    } else if (scheme['type'] === 'http' && String(scheme['scheme']).toLowerCase() === 'basic') {
      if (!credentials.apiKey) return false;
      request.headers['authorization'] = `Basic ${Buffer.from(`${credentials.apiKey}:`).toString('base64')}`;
    } else if (scheme['type'] === 'apiKey') {
      if (!credentials.apiKey) return false;
      const carried = scheme['name']!;
      if (scheme['in'] === 'header') request.headers[carried.toLowerCase()] = credentials.apiKey;
      else if (scheme['in'] === 'query') request.query.push(`${encodeURIComponent(carried)}=${encodeURIComponent(credentials.apiKey)}`);
      else request.cookies.push(`${carried}=${credentials.apiKey}`);
    } else if (scheme['type'] === 'oauth2' || scheme['type'] === 'openIdConnect') {
      if (!credentials.token) return false;
      request.headers['authorization'] = `Bearer ${credentials.token}`;
    } else return false;
  }
  return true;
}

/** A schema that is a local `$ref` (`#/components/...`), as the reference names it: the bundler leaves 3.2's `itemSchema` unresolved. */
function localTarget(document: Document, schema: Schema | undefined): Schema | undefined {
  const ref = schema?.['$ref'];
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node as Schema | undefined;
}

/** The request body of a media type: JSON text, JSON items (one per line), a form, multipart FormData, bytes or text. */
export function bodyFor(mediaType: string, schema: Schema | undefined, itemSchema?: Schema): { body: RequestBody; contentType?: string } {
  const essence = mediaType.split(';')[0]!.trim().toLowerCase();
  if (ITEM_MEDIA_TYPES.has(essence)) {
    // A stream of items (3.2 `itemSchema`, or a 3.1 array schema): one sample item, as a line (after RS in a JSON text sequence).
    const item = sampleOf(itemSchema ?? (schema?.['items'] as Schema | undefined) ?? schema);
    return { body: `${essence === 'application/json-seq' ? '\x1e' : ''}${JSON.stringify(item)}\n`, contentType: essence };
  }
  const value = sampleOf(schema);
  if (essence === 'application/json' || essence.endsWith('+json')) return { body: JSON.stringify(value), contentType: mediaType };
  if (essence === 'application/x-www-form-urlencoded') {
    const fields = Object.entries(value as object).map(([k, v]): [string, string] => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
    return { body: new URLSearchParams(fields).toString(), contentType: essence };
  }
  if (essence === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, property] of Object.entries(schema?.['properties'] ?? {})) {
      if (property['format'] === 'binary' || property['contentMediaType'] || (property['type'] === 'string' && property['contentEncoding'])) {
        form.append(name, new Blob([PNG_1X1], { type: 'image/png' }), `${name}.png`);
      } else if (property['type'] === 'array' && property['items']?.['format'] === 'binary') {
        form.append(name, new Blob([PNG_1X1], { type: 'image/png' }), `${name}.png`);
      } else {
        const field = sampleOf(property);
        form.append(name, typeof field === 'object' ? JSON.stringify(field) : String(field));
      }
    }
    return { body: form }; // fetch writes the boundary
  }
  if (essence.startsWith('text/')) return { body: typeof value === 'string' ? value : JSON.stringify(value), contentType: mediaType };
  return { body: new Blob([PNG_1X1]), contentType: essence.includes('*') ? 'application/octet-stream' : essence };
}

const ITEM_MEDIA_TYPES = new Set(['application/jsonl', 'application/x-ndjson', 'application/x-jsonlines', 'application/jsonlines', 'application/json-seq']);

const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Whether a media type is one the server serves (XML is refused by the engine at start, by name). */
export const servedMediaType = (mediaType: string): boolean => !/[/+]xml\b/i.test(mediaType.split(';')[0]!);

/**
 * A valid request for the operation: required and optional-with-example
 * parameters serialized by style, the first served request media type's body,
 * and the credentials of the first requirement they can satisfy (none when
 * anonymous calls are allowed and `credentials` is undefined).
 */
export function validRequest(
  document: Document,
  base: string,
  op: DocumentOperation,
  credentials: Partial<Credentials> | undefined,
  extraQuery: string[] = [],
): BuiltRequest {
  let route = op.path;
  const query: string[] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const parameter of op.parameters) {
    if (!parameter['required'] && parameter['in'] !== 'path') continue;
    const schema = parameter['schema'] ?? Object.values(parameter['content'] ?? {})[0]?.['schema'];
    const value = parameter['example'] ?? sampleOf(schema);
    const serialized = parameter['content']
      ? {
          [parameter['in']]:
            parameter['in'] === 'query' ? `${encodeURIComponent(parameter['name'])}=${encodeURIComponent(JSON.stringify(value))}` : JSON.stringify(value),
        }
      : serializeParameter(parameter, value);
    if (serialized.path !== undefined) route = route.replace(`{${parameter['name']}}`, serialized.path);
    if (serialized.query !== undefined) query.push(serialized.query);
    if (serialized.header !== undefined) headers[String(parameter['name']).toLowerCase()] = serialized.header;
    if (serialized.cookie !== undefined) cookies.push(serialized.cookie);
  }
  if (credentials) {
    const requirements = requirementsOf(document, op).filter((requirement) => Object.keys(requirement).length > 0);
    const scratch = { headers, query, cookies };
    const satisfied = requirements.some((requirement) => {
      const attempt = { headers: { ...headers }, query: [...query], cookies: [...cookies] };
      if (!present(document, requirement, credentials, attempt)) return false;
      Object.assign(scratch.headers, attempt.headers);
      scratch.query.splice(0, scratch.query.length, ...attempt.query);
      scratch.cookies.splice(0, scratch.cookies.length, ...attempt.cookies);
      return true;
    });
    if (!satisfied && requirements.length > 0 && !isAnonymousAllowed(requirementsOf(document, op)))
      throw new Error(`${op.name}: no requirement can be met with these credentials`);
  }
  if (cookies.length > 0) headers['cookie'] = cookies.join('; ');
  const request: BuiltRequest = {
    method: op.method.toUpperCase(),
    url: `${base}${route}${[...query, ...extraQuery].length > 0 ? `?${[...query, ...extraQuery].join('&')}` : ''}`,
    headers,
  };
  const content = Object.entries(op.operation['requestBody']?.['content'] ?? {}).find(([mediaType]) => servedMediaType(mediaType));
  if (content) {
    const { body, contentType } = bodyFor(content[0], content[1]['schema'], localTarget(document, content[1]['itemSchema'] as Schema | undefined));
    request.body = body;
    if (contentType) request.headers['content-type'] = contentType;
  }
  return request;
}

/** Sends a built request; the status, headers and body text. */
export async function send(request: BuiltRequest): Promise<{ status: number; headers: Headers; text: string; bytes: Buffer }> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, ...(request.body !== undefined && { body: request.body }) });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, text: bytes.toString('utf8'), bytes };
}

/**
 * An Ajv for the document's dialect (draft-04 for 3.0, 2020-12 for 3.1),
 * unknown formats ignored as JSON Schema says, built apart from the
 * server's. Checks a response body: 3.0's `nullable` means null is allowed,
 * and a `writeOnly` property is never in a response, so it is not required
 * there.
 */
export function schemaChecker(document: Document): (schema: Schema, value: unknown) => string | undefined {
  const is30 = String(document['openapi']).startsWith('3.0');
  // strict: false ignores OpenAPI's own keywords (example, xml, discriminator, nullable once converted).
  const ajv = is30 ? new AjvDraft04({ strict: false, allErrors: true, logger: false }) : new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv as never);
  ajv.addFormat('binary', true);
  const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();
  return (schema, value) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(asResponseSchema(schema, is30) as Schema);
      compiled.set(schema, validate);
    }
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

/** A copy of a schema (or of any value in it) as a response is checked against it (cycles kept). */
function asResponseSchema(schema: unknown, is30: boolean, seen = new Map<object, unknown>()): unknown {
  if (schema === null || typeof schema !== 'object') return schema;
  if (seen.has(schema)) return seen.get(schema);
  // An array's copy is filled by index ('0', '1', ...), as an object's by key.
  const copy: Schema = Array.isArray(schema) ? ([] as unknown as Schema) : {};
  seen.set(schema, copy);
  for (const [key, value] of Object.entries(schema)) copy[key] = asResponseSchema(value, is30, seen);
  if (Array.isArray(schema)) return copy;
  if (is30 && (schema as Schema)['nullable'] === true) {
    if (typeof copy.type === 'string') copy.type = [copy.type, 'null'];
    if (Array.isArray(copy.enum) && !copy.enum.includes(null)) copy.enum = [...copy.enum, null];
  }
  const properties = copy.properties;
  if (Array.isArray(copy.required) && properties) copy.required = copy.required.filter((name) => !properties[name]?.writeOnly);
  return copy;
}
