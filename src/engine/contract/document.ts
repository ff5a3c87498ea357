import { operationNames } from './names';

/**
 * An OpenAPI 3.0 or 3.1 document, bundled (every `$ref` local: see load.ts).
 * The engine reads the members typed here; the validator reads all of it.
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
   * none (the rule: src/engine/contract/names.ts).
   */
  operationId: string;
  /** The operationId as the document writes it; undefined when it has none. */
  documentId: string | undefined;
  /** Lower-case HTTP method, as in the document. */
  method: HttpMethod;
  /** OpenAPI path template relative to the base path, e.g. `/pets/{petId}`. */
  path: string;
  operation: OperationObject;
  /** The path item the operation belongs to (its shared `parameters`). */
  pathItem: Record<string, unknown>;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * Every operation of the document, in document order, each with its
 * identifier; throws when two operations would share one.
 *
 * @example listOperations(spec).map((op) => op.operationId) // ['listPets', 'createPet', ...]
 */
export function listOperations(spec: OpenApiDocument): SpecOperation[] {
  const found: Array<Omit<SpecOperation, 'operationId'>> = [];
  for (const [pathTemplate, item] of Object.entries(spec.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as OperationObject | undefined;
      if (!operation) continue;
      const documentId = typeof operation.operationId === 'string' ? operation.operationId : undefined;
      found.push({ documentId, method, path: pathTemplate, operation, pathItem: item });
    }
  }
  const names = operationNames(found.map(({ documentId, method, path }) => ({ operationId: documentId, method, path })));
  return found.map((op, index) => ({ ...op, operationId: names[index]! }));
}
