import type { Middleware } from 'openapi-fetch';

/** An operation as a version's generated operation table names it (generated/vN/operations.ts). */
export interface TabledOperation {
  readonly method: string;
  readonly path: string;
  /** Where the generated `paths` types an OpenAPI 3.2 QUERY or additional operation: a `post` under `'/books (QUERY)'`. */
  readonly typedAs?: { readonly path: string; readonly method: string };
}

/**
 * Sends an OpenAPI 3.2 QUERY or additional operation (COPY, PURGE, ...) with
 * its own method. openapi-typescript has no key for these methods, so the
 * generated `paths` types each as a `post` under a path of its own
 * (`'/books (QUERY)'`); the caller writes `client.POST('/books (QUERY)', ...)`,
 * checked by the compiler like any call, and this middleware sends it as
 * `QUERY /books` with the same query, headers and body.
 *
 * @example client.use(declaredMethods(operationTable)); await client.POST('/books (QUERY)', { body: { author: 'Le Guin' } });
 */
export function declaredMethods(operationTable: Readonly<Record<string, TabledOperation>>): Middleware {
  const sentAs = new Map<string, { method: string; suffix: string }>();
  for (const operation of Object.values(operationTable)) {
    if (!operation.typedAs) continue;
    const typed = operation.typedAs;
    // openapi-fetch puts the typed path in the URL as written; the URL encodes its space.
    sentAs.set(`${typed.method.toUpperCase()} ${typed.path}`, {
      method: operation.method.toUpperCase(),
      suffix: encodeURI(typed.path.slice(operation.path.length)),
    });
  }
  return {
    async onRequest({ request, schemaPath }) {
      const target = sentAs.get(`${request.method} ${schemaPath}`);
      if (!target) return undefined;
      const url = new URL(request.url);
      if (url.pathname.endsWith(target.suffix)) url.pathname = url.pathname.slice(0, -target.suffix.length);
      const body = request.body === null ? null : await request.arrayBuffer();
      return new Request(url, { method: target.method, headers: request.headers, body, signal: request.signal });
    },
  };
}
