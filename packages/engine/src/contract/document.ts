import { operationNames } from './names';

/**
 * An OpenAPI 3.0, 3.1 or 3.2 document, bundled (every `$ref` local: see load.ts).
 * The engine reads the members typed here; the validator reads all of it.
 *
 * @example const document: OpenApiDocument = { openapi: '3.1.0', info: { title: 'Notes', version: '1.0.0' }, paths: {} };
 */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  servers?: Array<{ url: string; variables?: Record<string, { default: string }> }>;
  paths: Record<string, Record<string, unknown>>;
  security?: SecurityRequirement[];
  components?: { securitySchemes?: Record<string, unknown>; [key: string]: unknown };
  webhooks?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** `{ schemeName: [scopes] }`: every scheme of one requirement must pass (AND); a list of requirements is OR. */
export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId?: string;
  deprecated?: boolean;
  security?: SecurityRequirement[];
  'x-deprecated-at'?: string;
  'x-sunset'?: string;
  'x-successor'?: { operationId: string };
  [key: string]: unknown;
}

export interface SpecOperation {
  /**
   * The operation's identifier in code, metrics and logs: its operationId made
   * a JavaScript identifier, or a name made of its method and path when it has
   * none (the rule: src/contract/names.ts).
   */
  operationId: string;
  /** The operationId as the document writes it; undefined when it has none. */
  documentId: string | undefined;
  /**
   * Lower-case HTTP method: a path item's key (`get` ... `trace`, and 3.2's
   * `query`), or the lower-cased key of 3.2's `additionalOperations` (`purge`).
   */
  method: string;
  /** Where the operation object is in the document, as a JSON pointer: `/paths/~1pets/get`, `/paths/~1pets/additionalOperations/PURGE`. */
  pointer: string;
  /** OpenAPI path template relative to the base path, e.g. `/pets/{petId}`. */
  path: string;
  operation: OperationObject;
  /** The path item the operation belongs to (its shared `parameters`). */
  pathItem: Record<string, unknown>;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
/** A 3.2 path item's fixed methods: those of 3.0 and 3.1, and `query` (the HTTP QUERY method, which has a body). */
export const OPENAPI_32_METHODS = [...HTTP_METHODS, 'query'] as const;

/** Whether the document is OpenAPI 3.2 (QUERY, `additionalOperations`, `in: querystring`, `itemSchema`). */
export const isOpenApi32 = (spec: { openapi: string }): boolean => spec.openapi.startsWith('3.2');

const escapeKey = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Every operation of the document, in document order, each with its
 * identifier; throws when two operations would share one.
 *
 * @example listOperations(spec).map((op) => op.operationId) // ['listPets', 'createPet', ...]
 */
export function listOperations(spec: OpenApiDocument): SpecOperation[] {
  const found: Array<Omit<SpecOperation, 'operationId'>> = [];
  const methods = isOpenApi32(spec) ? OPENAPI_32_METHODS : HTTP_METHODS;
  for (const [pathTemplate, item] of Object.entries(spec.paths ?? {})) {
    const base = `/paths/${escapeKey(pathTemplate)}`;
    const add = (method: string, operation: OperationObject, pointer: string): void => {
      const documentId = typeof operation.operationId === 'string' ? operation.operationId : undefined;
      found.push({ documentId, method, pointer, path: pathTemplate, operation, pathItem: item });
    };
    for (const method of methods) {
      const operation = item[method] as OperationObject | undefined;
      if (operation) add(method, operation, `${base}/${method}`);
    }
    if (!isOpenApi32(spec)) continue;
    const additional = (item['additionalOperations'] ?? {}) as Record<string, OperationObject | undefined>;
    for (const [method, operation] of Object.entries(additional)) {
      if (operation) add(method.toLowerCase(), operation, `${base}/additionalOperations/${escapeKey(method)}`);
    }
  }
  const names = operationNames(found.map(({ documentId, method, path }) => ({ operationId: documentId, method, path })));
  return found.map((op, index) => ({ ...op, operationId: names[index]! }));
}
