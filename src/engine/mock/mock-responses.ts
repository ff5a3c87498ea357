import { sample } from 'openapi-sampler';
import type { OpenApiDocument } from '../contract/document';
import { listOperations } from '../contract/document';
import { essence, mediaKind, negotiate } from '../contract/media-types';
import { schemaValidator, type SchemaValidator } from '../contract/schemas';
import { deref, escapePointer, resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import { CODE_BY_STATUS } from '../errors/to-api-error';
import { jsonFirst } from '../response/representations';
import { placeholderFor } from './placeholders';
import { parsePrefer } from './prefer-header';

/** A response the mock sends: a declared status, its declared headers' examples, and a body in one of its media types (none for 204). */
export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  mediaType?: string;
  body?: unknown;
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
type Examples = Map<string, unknown>;

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
 * type gets a small valid placeholder (a 1×1 PNG for `image/png`). Every
 * JSON and text body is validated against its schema here, so a contract
 * whose own example is invalid stops the server at start, with a message
 * naming the operation, status, media type and example. XML is not served.
 *
 * @example buildOperationMocks(spec, ['adoptPet']).get('adoptPet')!.answer('code=404')
 */
export function buildOperationMocks(spec: OpenApiDocument, operationIds: readonly string[]): Map<string, OperationMock> {
  const validator = schemaValidator(spec, { direction: 'response', allErrors: true });
  const wanted = new Set(operationIds);
  const mocks = new Map<string, OperationMock>();
  for (const op of listOperations(spec)) {
    if (!wanted.has(op.operationId)) continue;
    const where = `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
    const declared = new Map<string, DeclaredResponse>();
    for (const [status, entry] of Object.entries((op.operation['responses'] ?? {}) as Record<string, Node>)) {
      if (!/^[1-5]\d\d$/.test(status)) continue; // `default` and ranges have no status to answer with
      const pointer = entry['$ref'] ? (entry['$ref'] as string).replace(/^#/, '') : `/paths/${escapePointer(op.path)}/${op.method}/responses/${status}`;
      declared.set(status, declaredResponse(spec, validator, `${where} ${status}`, Number(status), pointer));
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
        const body = asked.example !== undefined ? examples.get(asked.example) : examples.values().next().value;
        return { status: response.status, headers: response.headers, mediaType: concrete(mediaType), body };
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

function declaredResponse(spec: OpenApiDocument, validator: SchemaValidator, where: string, status: number, pointer: string): DeclaredResponse {
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
    const kind = mediaKind(mediaType);
    const media = content[mediaType]!;
    const schemaPointer = `${responseRef!.replace(/^#/, '')}/content/${escapePointer(mediaType)}/schema`;
    bodies.set(
      mediaType,
      kind === 'binary'
        ? binaryExamples(mediaType)
        : checkedExamples(spec, validator, served.length > 1 ? `${where} ${mediaType}` : where, status, media, kind, schemaPointer),
    );
  }
  return { status, headers, bodies };
}

/** The examples of a JSON, text or form body, each checked against its schema. */
function checkedExamples(
  spec: OpenApiDocument,
  validator: SchemaValidator,
  where: string,
  status: number,
  media: Node,
  kind: string,
  schemaPointer: string,
): Examples {
  const examples: Examples = new Map();
  const check = (name: string, value: unknown, origin: string): void => {
    if (media['schema'] !== undefined) {
      const problem = validator.explain(schemaPointer, value);
      if (problem) throw new Error(`mock: ${origin} of ${where} does not match its schema: ${problem}`);
    }
    examples.set(name, value);
  };
  if (media['examples']) {
    for (const [name, example] of Object.entries(media['examples'] as Record<string, Node>))
      check(name, deref(spec, example)['value'], `the example "${name}"`);
  }
  if (media['example'] !== undefined) check('', media['example'], 'the example');
  if (examples.size === 0) {
    let generated = sample(media['schema'] ?? {}, { quiet: true, skipWriteOnly: true }, spec);
    if (kind === 'text' && generated === undefined) generated = '';
    // A generated Error object agrees with the status it is sent with.
    if ((media['schema'] as Node | undefined)?.['$ref'] === '#/components/schemas/Error' && typeof generated === 'object' && generated !== null) {
      generated = { ...generated, status, code: ERROR_CODE_BY_STATUS[status] ?? (generated as Node)['code'] };
    }
    check('', generated, 'the example generated from the schema (from its `examples`, else a sample: fix them or add a response `example`)');
  }
  if (kind === 'text')
    for (const [name, value] of examples) if (typeof value !== 'string') examples.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  return examples;
}

/** A binary body: a small valid placeholder of the media type (examples of binary bodies are file names or prose, not bytes). */
function binaryExamples(mediaType: string): Examples {
  return new Map([['', placeholderFor(concrete(mediaType))]]);
}
