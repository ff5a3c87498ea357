import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** The subset of an OpenAPI 3.1 document the server reads itself (the validator reads all of it). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers?: Array<{ url: string; variables?: Record<string, { default: string }> }>;
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface OperationObject {
  operationId: string;
  deprecated?: boolean;
  'x-deprecated-at'?: string;
  'x-sunset'?: string;
  'x-successor'?: { operationId: string };
  [key: string]: unknown;
}

export interface SpecOperation {
  operationId: string;
  /** Lower-case HTTP method, as in the document. */
  method: HttpMethod;
  /** OpenAPI path template relative to the base path, e.g. `/pets/{petId}`. */
  path: string;
  operation: OperationObject;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'openapi', 'v1', 'openapi.yaml'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`openapi/v1/openapi.yaml not found above ${start}`);
  }
}

/** The project's root (where `openapi/` is); found by walking up so it works from `src/` and from `dist/`. */
export const PROJECT_ROOT = findProjectRoot(__dirname);

/** Absolute path of the first major version's contract, the default document (`/openapi.json` publishes it). */
export const SPEC_PATH = path.join(PROJECT_ROOT, 'openapi', 'v1', 'openapi.yaml');

/** Reads and parses the contract. Call once at start; the result is treated as read-only. */
export function loadSpec(file: string = SPEC_PATH): OpenApiDocument {
  return parse(readFileSync(file, 'utf8')) as OpenApiDocument;
}

/** Every operation of the document, in document order. */
export function listOperations(spec: OpenApiDocument): SpecOperation[] {
  const operations: SpecOperation[] = [];
  for (const [pathTemplate, item] of Object.entries(spec.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as OperationObject | undefined;
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${pathTemplate} has no operationId`);
      operations.push({ operationId: operation.operationId, method, path: pathTemplate, operation });
    }
  }
  return operations;
}
