import { sample } from 'openapi-sampler';
import type { OpenApiDocument } from '../contract/load-spec';
import { listOperations } from '../contract/load-spec';
import { schemaValidator } from '../contract/schema-validator';
import { deref, escapePointer, resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import { CODE_BY_STATUS } from '../errors/to-api-error';
import { parsePrefer } from './prefer-header';

/** A response the mock sends: a declared status, its declared headers' examples, and a body (none for 204). */
export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** The example answers of one operation, chosen per request from its `Prefer` header. */
export interface OperationMock {
  /**
   * The lowest declared 2xx with its first example, or what `Prefer: code=… /
   * example=…` asks for; undefined when the operation declares no 2xx and
   * nothing was asked (the caller answers 501). Throws a 400 ApiError for a
   * code the operation does not declare or an example its response lacks.
   */
  answer(prefer: string | undefined): MockResponse | undefined;
}

interface DeclaredResponse {
  status: number;
  headers: Record<string, string>;
  /** Named examples in document order; the first is the default. Empty when the response has no JSON body. */
  examples: Map<string, unknown>;
}

type Node = Record<string, any>;

const ERROR_CODE_BY_STATUS: Readonly<Record<number, string>> = { ...CODE_BY_STATUS, 500: 'internal_error', 503: 'unavailable' };

/**
 * Builds the mock answers of `operationIds` from the contract: each declared
 * response's `example` / `examples`, else a sample generated from its schema
 * by openapi-sampler (deterministic; honours `example`, `examples`, `const`,
 * `default`, `enum`). Every body is validated against its schema here, so a
 * contract whose own example is invalid stops the server at start, with a
 * message naming the operation, status and example.
 *
 * @example buildOperationMocks(spec, ['adoptPet']).get('adoptPet')!.answer('code=404')
 */
export function buildOperationMocks(spec: OpenApiDocument, operationIds: readonly string[]): Map<string, OperationMock> {
  const validator = schemaValidator(spec);
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
    const success = [...declared.keys()].filter((status) => status.startsWith('2')).sort()[0];
    mocks.set(op.operationId, {
      answer(prefer) {
        const asked = parsePrefer(prefer);
        const status = asked.code ?? success;
        if (status === undefined) return undefined;
        const response = declared.get(status);
        if (!response) {
          throw new ApiError(400, 'invalid_request', `Prefer: code=${status} is not a declared response of ${op.operationId}; declared: ${[...declared.keys()].join(', ')}`);
        }
        if (asked.example !== undefined && !response.examples.has(asked.example)) {
          const names = [...response.examples.keys()].filter((name) => name !== '');
          throw new ApiError(
            400,
            'invalid_request',
            `Prefer: example=${asked.example} is not an example of ${op.operationId} ${status}; ` +
              (names.length ? `its examples: ${names.join(', ')}` : 'it has no named examples'),
          );
        }
        const examples = response.examples;
        const body = asked.example !== undefined ? examples.get(asked.example) : examples.values().next().value;
        return { status: response.status, headers: response.headers, ...(examples.size > 0 ? { body } : {}) };
      },
    });
  }
  return mocks;
}

function declaredResponse(spec: OpenApiDocument, validator: ReturnType<typeof schemaValidator>, where: string, status: number, pointer: string): DeclaredResponse {
  const { node: response, ref: responseRef } = resolveRef(spec, { $ref: `#${pointer}` });
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries((response['headers'] ?? {}) as Record<string, Node>)) {
    const definition = deref(spec, header) as Node;
    const value = definition['example'] ?? sample(definition['schema'] ?? {}, { quiet: true }, spec);
    if (value !== undefined) headers[name] = String(value);
  }
  const examples = new Map<string, unknown>();
  const media = (response['content'] as Record<string, Node> | undefined)?.['application/json'];
  if (status === 204 || !media) return { status, headers, examples };

  const schemaPointer = `${responseRef!.replace(/^#/, '')}/content/application~1json/schema`;
  const check = (name: string, value: unknown, origin: string): void => {
    const problem = validator.explain(schemaPointer, value);
    if (problem) throw new Error(`mock: ${origin} of ${where} does not match its schema: ${problem}`);
    examples.set(name, value);
  };
  if (media['examples']) {
    for (const [name, example] of Object.entries(media['examples'] as Record<string, Node>)) {
      check(name, deref(spec, example)['value'], `the example "${name}"`);
    }
  }
  if (media['example'] !== undefined) check('', media['example'], 'the example');
  if (examples.size === 0) {
    let generated = sample(media['schema'] ?? {}, { quiet: true, skipWriteOnly: true }, spec);
    // A generated Error object agrees with the status it is sent with.
    if (media['schema']?.['$ref'] === '#/components/schemas/Error' && typeof generated === 'object' && generated !== null) {
      generated = { ...generated, status, code: ERROR_CODE_BY_STATUS[status] ?? (generated as Node)['code'] };
    }
    check('', generated, 'the example generated from the schema (from its `examples`, else a sample: fix them or add a response `example`)');
  }
  return { status, headers, examples };
}
