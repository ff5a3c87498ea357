/**
 * OpenAPI 3.2 said the way 3.1 says it, for the libraries that read 3.0 and
 * 3.1 only: openapi-typescript (`npm run generate`) and api-smart-diff
 * (`npm run api:diff`).
 */
import { HTTP_METHODS, holdsNames, isOpenApi32, type OpenApiDocument, type SpecOperation } from '@spec-first/engine/testing';

/**
 * The document as openapi-typescript reads it: it reads 3.0 and 3.1 only (its
 * issue #2577), so a 3.2 document is handed over as a copy labelled 3.1 in
 * which each 3.2 construct is said the way 3.1 says the same to a type
 * generator:
 *
 * - a `query` operation, and each of `additionalOperations`, as a `post`
 *   under a path of its own (`/books (QUERY)`), which the operation table
 *   names (`typedAs`), so its handler is typed like any other;
 * - a parameter `in: querystring` as a query parameter of the same name
 *   whose schema is its content's (its handler receives the parsed value as
 *   `query[name]`);
 * - an `itemSchema` as `schema: {type: array, items: itemSchema}` (a stream's
 *   items are typed one at a time).
 *
 * 3.0 and 3.1 documents are handed over as they are. Nothing generated is
 * edited afterwards.
 */
export function typedDocument(spec: OpenApiDocument): OpenApiDocument {
  if (!isOpenApi32(spec)) return spec;
  const copy = rewritten(structuredClone(spec), false) as OpenApiDocument;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, item] of Object.entries(copy.paths)) {
    const { query, additionalOperations, ...rest } = item as Record<string, unknown>;
    paths[template] = rest;
    const extra: Array<[string, unknown]> = [
      ...(query === undefined ? [] : [['query', query] as [string, unknown]]),
      ...Object.entries((additionalOperations ?? {}) as Record<string, unknown>),
    ];
    for (const [method, operation] of extra) {
      paths[typedPath(template, method)] = { ...(rest['parameters'] !== undefined && { parameters: rest['parameters'] }), post: operation };
    }
  }
  return { ...copy, openapi: '3.1.1', paths };
}

/** Where openapi-typescript's `paths` has an operation whose method a 3.1 path item has no key for. */
export const typedPath = (template: string, method: string): string => `${template} (${method.toUpperCase()})`;

/** The path and method of an operation in the types (`typedDocument`), when not its own. */
export function typedAs(op: SpecOperation): { path: string; method: string } | undefined {
  return (HTTP_METHODS as readonly string[]).includes(op.method) ? undefined : { path: typedPath(op.path, op.method), method: 'post' };
}

/** `in: querystring` made `in: query`; `itemSchema` made an array `schema`; at every depth outside maps of names (a property may be called `itemSchema` or `in`). */
function rewritten(node: unknown, names: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => rewritten(item, false));
  if (node === null || typeof node !== 'object') return node;
  const object = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) out[key] = rewritten(value, holdsNames(key, names));
  if (names) return out;
  if (out['in'] === 'querystring' && typeof out['name'] === 'string') {
    // Typed as the value its content's schema describes (openapi-typescript types a content parameter as text).
    const media = Object.values((out['content'] ?? {}) as Record<string, { schema?: unknown }>)[0];
    out['in'] = 'query';
    if (media?.schema !== undefined) {
      out['schema'] = media.schema;
      delete out['content'];
    }
  }
  if (out['itemSchema'] !== undefined && out['schema'] === undefined) {
    out['schema'] = { type: 'array', items: out['itemSchema'] };
    delete out['itemSchema'];
  }
  return out;
}
