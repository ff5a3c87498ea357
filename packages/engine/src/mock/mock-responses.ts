import { sample } from 'openapi-sampler';
import type { OpenApiDocument } from '../contract/document';
import { listOperations } from '../contract/document';
import { essence, mediaKind, negotiate } from '../contract/media-types';
import { schemaValidator, type SchemaValidator } from '../contract/schemas';
import { deref, escapePointer, resolveRef } from '../contract/refs';
import { holdsNames } from '../contract/extensions';
import { ApiError } from '../errors/api-error';
import { CODE_BY_STATUS } from '../errors/to-api-error';
import { jsonFirst } from '../response/representations';
import { placeholderFor } from './placeholders';
import { sequentialFormat } from '../response/sequential';
import { parsePrefer } from './prefer-header';

/** A response the mock sends: a declared status, its declared headers' examples, and a body in one of its media types (none for 204). */
export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  mediaType?: string;
  body?: unknown;
  /** The stored item's version (stateful mode): sent as `ETag` where the response declares one. */
  etag?: string;
}

/** The example answers of one operation, chosen per request from its `Prefer` and `Accept` headers. */
export interface OperationMock {
  /**
   * The lowest declared 2xx (else 3xx) with its first example, in the media
   * type `Accept` prefers, or what `Prefer: code=… / example=…` asks for;
   * undefined when the operation declares no such status and nothing was
   * asked (the caller answers 501). Throws a 400 ApiError for a code the
   * operation does not declare or an example its response lacks.
   */
  answer(prefer: string | undefined, accept?: string): MockResponse | undefined;
}

/** One media type of a declared response: its named examples in document order (the first is the default). */
type Examples = Map<string, ServedExample>;

/** What the mock sends for one example: the body, and the header that says when it is not the document's example as written. */
interface ServedExample {
  body: unknown;
  /** `X-Mock-Replaced-Example` (a valid sample stands in for an invalid example) or `X-Mock-Invalid-Example` (nothing valid could be made). */
  marker?: Readonly<Record<string, string>>;
}

/** How the mock tells what it could not serve as written: once per example, at start. */
export interface MockOptions {
  /** Receives one message per invalid example (default: ignored). */
  warn?: (message: string) => void;
}

interface DeclaredResponse {
  status: number;
  headers: Record<string, string>;
  /** By media type, JSON first; empty when the response has no body. */
  bodies: Map<string, Examples>;
}

type Node = Record<string, unknown>;

/**
 * Builds the mock answers of `operationIds` from the contract: each declared
 * response, in each media type it declares, gets its `example` / `examples`,
 * else a sample generated from its schema by openapi-sampler (deterministic;
 * honours `example`, `examples`, `const`, `default`, `enum`); a binary media
 * type gets a small valid placeholder (a 1×1 PNG for `image/png`). XML is
 * not served.
 *
 * Every JSON and text body is validated against its schema here. Documents
 * written by people carry examples their own schemas refuse; such a document
 * is still served: `warn` gets one message per invalid example, naming the
 * operation, status, media type and example, and the example is answered
 * with a sample generated from the schema alone (its own examples left out),
 * marked `X-Mock-Replaced-Example: <name>`. Where no sample the schema
 * accepts can be generated either (a `pattern` the sampler cannot meet), the
 * example is sent as written, marked `X-Mock-Invalid-Example: <name>`.
 *
 * @example buildOperationMocks(spec, ['adoptPet'], { warn: (message) => logger.warn(message) }).get('adoptPet')!.answer('code=404')
 */
export function buildOperationMocks(spec: OpenApiDocument, operationIds: readonly string[], options: MockOptions = {}): Map<string, OperationMock> {
  const warn = options.warn ?? (() => undefined);
  const validator = schemaValidator(spec, { direction: 'response', allErrors: true });
  const wanted = new Set(operationIds);
  const mocks = new Map<string, OperationMock>();
  for (const op of listOperations(spec)) {
    if (!wanted.has(op.operationId)) continue;
    const where = `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
    const declared = new Map<string, DeclaredResponse>();
    for (const [status, entry] of Object.entries((op.operation['responses'] ?? {}) as Record<string, Node>)) {
      if (!/^[1-5]\d\d$/.test(status)) continue; // `default` and ranges have no status to answer with
      const pointer = entry['$ref'] ? (entry['$ref'] as string).replace(/^#/, '') : `${op.pointer}/responses/${status}`;
      declared.set(status, declaredResponse(spec, validator, `${where} ${status}`, Number(status), pointer, warn));
    }
    const statuses = [...declared.keys()].sort();
    const fallback = statuses.find((status) => status.startsWith('2')) ?? statuses.find((status) => status.startsWith('3'));
    mocks.set(op.operationId, {
      answer(prefer, accept) {
        const asked = parsePrefer(prefer);
        const status = asked.code ?? fallback;
        if (status === undefined) return undefined;
        const response = declared.get(status);
        if (!response) {
          throw new ApiError(
            400,
            'invalid_request',
            `Prefer: code=${status} is not a declared response of ${op.operationId}; declared: ${[...declared.keys()].join(', ')}`,
          );
        }
        if (response.bodies.size === 0) return { status: response.status, headers: response.headers };
        const offered = [...response.bodies.keys()];
        const mediaType = negotiate(offered, accept) ?? offered[0]!;
        const examples = response.bodies.get(mediaType)!;
        if (asked.example !== undefined && !examples.has(asked.example)) {
          const names = [...examples.keys()].filter((name) => name !== '');
          throw new ApiError(
            400,
            'invalid_request',
            `Prefer: example=${asked.example} is not an example of ${op.operationId} ${status}${offered.length > 1 ? ` (${mediaType})` : ''}; ` +
              (names.length ? `its examples: ${names.join(', ')}` : 'it has no named examples'),
          );
        }
        const served = (asked.example !== undefined ? examples.get(asked.example) : examples.values().next().value)!;
        const headers = served.marker ? { ...response.headers, ...served.marker } : response.headers;
        return { status: response.status, headers, mediaType: concrete(mediaType), body: served.body };
      },
    });
  }
  return mocks;
}

/** A declared range answered with its most common member: `image/*` → `image/png`, `*\/*` → `application/octet-stream`. */
function concrete(mediaType: string): string {
  const type = essence(mediaType);
  if (type === '*/*') return 'application/octet-stream';
  if (type === 'image/*') return 'image/png';
  if (type === 'text/*') return 'text/plain';
  if (type.endsWith('/*')) return `${type.slice(0, -2)}/octet-stream`;
  return type;
}

const ERROR_CODE_BY_STATUS: Readonly<Record<number, string>> = CODE_BY_STATUS;

function declaredResponse(
  spec: OpenApiDocument,
  validator: SchemaValidator,
  where: string,
  status: number,
  pointer: string,
  warn: (message: string) => void,
): DeclaredResponse {
  const { node: response, ref: responseRef } = resolveRef(spec, { $ref: `#${pointer}` });
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries((response['headers'] ?? {}) as Record<string, Node>)) {
    const definition = deref(spec, header) as Node;
    const value = definition['example'] ?? sample(definition['schema'] ?? {}, { quiet: true }, spec);
    if (value !== undefined) headers[name] = String(value);
  }
  const bodies = new Map<string, Examples>();
  const content = (response['content'] as Record<string, Node> | undefined) ?? {};
  if (status === 204) return { status, headers, bodies };
  const served = jsonFirst(Object.keys(content)).filter((mediaType) => mediaKind(mediaType) !== 'xml');
  for (const mediaType of served) {
    // A stream's example is the list of its items (its schema an array of them): sent as a stream of those items.
    const kind = sequentialFormat(mediaType) !== undefined ? 'json' : mediaKind(mediaType);
    const media = content[mediaType]!;
    const mediaPointer = `${responseRef!.replace(/^#/, '')}/content/${escapePointer(mediaType)}`;
    // 3.2's itemSchema: each item of the stream is checked against it, and an example is the list of items.
    const schemaPointer = media['itemSchema'] !== undefined ? { items: `${mediaPointer}/itemSchema` } : `${mediaPointer}/schema`;
    bodies.set(
      mediaType,
      kind === 'binary'
        ? binaryExamples(mediaType)
        : checkedExamples(spec, validator, served.length > 1 ? `${where} ${mediaType}` : where, status, media, mediaType, kind, schemaPointer, warn),
    );
  }
  return { status, headers, bodies };
}

/** The examples of a JSON, text or form body, each checked against its schema; an invalid one is warned of and replaced where a valid sample can be made. */
function checkedExamples(
  spec: OpenApiDocument,
  validator: SchemaValidator,
  where: string,
  status: number,
  media: Node,
  mediaType: string,
  kind: string,
  schemaPointer: string | { items: string },
  warn: (message: string) => void,
): Examples {
  const examples: Examples = new Map();
  const itemSchema = typeof schemaPointer === 'string' ? undefined : (media['itemSchema'] as Node);
  // The schema samples are drawn from: for a stream of items, an array of them.
  const schema = itemSchema !== undefined ? { type: 'array', items: itemSchema, minItems: 1 } : (media['schema'] as Node | undefined);
  const problemOf = (value: unknown): string | undefined => {
    if (typeof schemaPointer === 'string') return schema === undefined ? undefined : validator.explain(schemaPointer, value);
    if (!Array.isArray(value)) return 'data must be the list of the items of the stream';
    for (const [index, item] of value.entries()) {
      const problem = validator.explain(schemaPointer.items, item);
      if (problem) return problem.replace(/^data/, `data/${index}`);
    }
    return undefined;
  };
  let replacement: { body: unknown } | null | undefined;
  // A sample from the schema alone (no example of the document), made once per media type and only when needed.
  const validSample = (): { body: unknown } | null => {
    if (replacement === undefined) {
      replacement = null;
      // Without the document's examples; then with the optional properties left out too (where they are what breaks a oneOf).
      for (const onlyRequired of [false, true]) {
        const body = generated(spec, schema, kind, status, false, onlyRequired);
        if (problemOf(body) === undefined) {
          replacement = { body };
          break;
        }
      }
    }
    return replacement;
  };
  const add = (name: string, value: unknown, origin: string): void => {
    const problem = problemOf(value);
    if (problem === undefined) {
      examples.set(name, { body: value });
      return;
    }
    const label = name === '' ? 'example' : name;
    const stand = validSample();
    if (stand) {
      warn(
        `mock: ${origin} of ${where} does not match its schema (${problem}); a sample generated from the schema is sent instead, marked X-Mock-Replaced-Example: ${label}`,
      );
      examples.set(name, { body: stand.body, marker: { 'X-Mock-Replaced-Example': label } });
    } else {
      warn(
        `mock: ${origin} of ${where} does not match its schema (${problem}), and no sample the schema accepts could be generated; it is sent as written, marked X-Mock-Invalid-Example: ${label}`,
      );
      examples.set(name, { body: value, marker: { 'X-Mock-Invalid-Example': label } });
    }
  };
  if (media['examples']) {
    for (const [name, example] of Object.entries(media['examples'] as Record<string, Node>))
      add(name, exampleValue(deref(spec, example), mediaType), `the example "${name}"`);
  }
  if (media['example'] !== undefined) add('', media['example'], 'the example');
  if (examples.size === 0) add('', generated(spec, schema, kind, status, true), 'the example generated from the schema (from its `examples`, else a sample)');
  if (kind === 'text') {
    for (const example of examples.values())
      if (typeof example.body !== 'string') example.body = typeof example.body === 'object' ? JSON.stringify(example.body) : String(example.body);
  }
  return examples;
}

/**
 * The value of an Example object: 3.2's `dataValue`, else `value`, else
 * 3.2's `serializedValue` read back (JSON text, or for a stream its JSON
 * Lines or sequence records, as the list of items).
 */
function exampleValue(example: Node, mediaType: string): unknown {
  if (example['dataValue'] !== undefined) return example['dataValue'];
  if (example['value'] !== undefined) return example['value'];
  const serialized = example['serializedValue'];
  if (typeof serialized !== 'string') return undefined;
  const format = sequentialFormat(mediaType);
  try {
    if (format === 'jsonl')
      return serialized
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
    if (format === 'json-seq')
      return serialized
        .split('\u001e')
        .slice(1)
        .map((record) => JSON.parse(record) as unknown);
    return mediaKind(mediaType) === 'json' ? (JSON.parse(serialized) as unknown) : serialized;
  } catch {
    // Not what its media type says: kept as text, for the schema check to judge (and the mock to replace).
    return serialized;
  }
}

/**
 * A body generated from the schema by openapi-sampler: with the schema's own
 * `example`s and `examples` (which the sampler prefers), or without them, for
 * when those are what the schema refuses.
 */
function generated(spec: OpenApiDocument, schema: Node | undefined, kind: string, status: number, withExamples: boolean, onlyRequired = false): unknown {
  const source = withExamples ? spec : (withoutSchemaExamples(spec) as OpenApiDocument);
  const from = withExamples ? (schema ?? {}) : (withoutSchemaExamples(schema ?? {}) as Node);
  let body = sample(from, { quiet: true, skipWriteOnly: true, skipNonRequired: onlyRequired }, source);
  if (kind === 'text' && body === undefined) body = '';
  // A generated Error object agrees with the status it is sent with.
  if (schema?.['$ref'] === '#/components/schemas/Error' && typeof body === 'object' && body !== null) {
    body = { ...body, status, code: ERROR_CODE_BY_STATUS[status] ?? (body as Node)['code'] };
  }
  return body;
}

const withoutExamplesCache = new WeakMap<object, unknown>();

/** A copy of a document or schema with every schema's `example` and `examples` left out (cached: the document never changes once loaded). */
function withoutSchemaExamples(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  const cached = withoutExamplesCache.get(node);
  if (cached !== undefined) return cached;
  const strip = (value: unknown, namesHere: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => strip(item, false));
    if (value === null || typeof value !== 'object') return value;
    const copy: Node = {};
    for (const [key, child] of Object.entries(value)) {
      if (!namesHere && (key === 'example' || key === 'examples')) continue;
      // A map of names (`properties`: a property may be called `example`) keeps every member.
      copy[key] = strip(child, holdsNames(key, namesHere));
    }
    return copy;
  };
  const result = strip(node, false);
  withoutExamplesCache.set(node, result);
  return result;
}

/** A binary body: a small valid placeholder of the media type (examples of binary bodies are file names or prose, not bytes). */
function binaryExamples(mediaType: string): Examples {
  return new Map([['', { body: placeholderFor(concrete(mediaType)) }]]);
}
