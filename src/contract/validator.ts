import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenApiDocument, SpecOperation } from './load-spec';
import { HTTP_METHODS } from './load-spec';
import { int64Format } from './formats';

export { int64Format };
import { refuseRepeatedQuery, singleValuedQuery } from '../guards/query-shape';
import { decimalIntegerParameters } from './integer-parameters';
import { asMiddleware, fromMiddleware, type Stage } from '../pipeline/stage';

export interface ValidatorOptions {
  /** Validate handler responses too (always in development and test). */
  validateResponses: boolean;
}

/**
 * The contract enforced at run time. Requests are always validated at full
 * strictness: unknown query parameters are refused, bodies are never
 * type-coerced (only path and query strings are parsed as their schema types),
 * query parameters are single-valued.
 */
export function contractValidator(spec: OpenApiDocument, basePath: string, options: ValidatorOptions): RequestHandler[] {
  const validator = validatorMiddlewares({ ...structuredClone(spec), servers: [{ url: basePath }] }, options);
  // After the validator's own route lookup, so an unknown path or method is
  // still its 404/405, not a 400 about the query.
  const afterLookup = validator.findIndex((middleware) => middleware.name === 'metadataMiddleware') + 1;
  if (afterLookup === 0) throw new Error('express-openapi-validator: metadataMiddleware not found (has its middleware chain changed?)');
  return [mediaTypeOnly, ...validator.slice(0, afterLookup), singleValuedQuery, ...validator.slice(afterLookup)];
}

/**
 * The validator of one operation, for its compiled pipeline: an
 * express-openapi-validator instance (same options, same strictness) that
 * sees a copy of the contract whose only path is this operation's. The
 * validator looks a request's route up by compiling and testing every path of
 * its document on every request (`lookupRoute` in its openapi.metadata.js), so
 * an instance per operation costs one path per request however large the
 * contract grows. The caller has matched the method and path already; the
 * validator still checks and decodes the path parameters itself.
 *
 * @example stages.push(...operationValidator(spec, '/v1', op, { validateResponses: false }));
 */
export function operationValidator(spec: OpenApiDocument, basePath: string, op: SpecOperation, options: ValidatorOptions): Stage[] {
  const pathItem = spec.paths[op.path]!;
  const only = {
    ...structuredClone({ ...spec, paths: {} }),
    servers: [{ url: basePath }],
    paths: { [op.path]: { ...structuredClone(pickShared(pathItem)), [op.method]: structuredClone(op.operation) } },
  };
  const chain = validatorMiddlewares(only, options);
  // Its path-parameter hook (app.param, for Express routes) and its security
  // step (off: authentication is ours) have nothing to do in a compiled pipeline.
  const byName = new Map(chain.map((middleware) => [middleware.name, middleware]));
  if (!byName.has('metadataMiddleware') || !byName.has('requestMiddleware')) {
    throw new Error('express-openapi-validator: metadataMiddleware or requestMiddleware not found (has its middleware chain changed?)');
  }
  const stage = (name: string): Stage[] => (byName.has(name) ? [fromMiddleware(byName.get(name)!)] : []);
  const decimalIntegers = decimalIntegerParameters(spec, op);
  return [
    reduceContentType,
    ...stage('metadataMiddleware'),
    refuseRepeatedQuery,
    ...(decimalIntegers ? [decimalIntegers] : []),
    ...stage('requestMiddleware'),
    ...stage('responseMiddleware'),
  ];
}

/** A path item's members shared by its operations (parameters, servers...), without the other operations. */
function pickShared(pathItem: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(pathItem).filter(([key]) => !HTTP_METHOD_KEYS.has(key)));
}
const HTTP_METHOD_KEYS: ReadonlySet<string> = new Set(HTTP_METHODS);

function validatorMiddlewares(apiSpec: OpenApiDocument, options: ValidatorOptions): RequestHandler[] {
  return OpenApiValidator.middleware({
    // The validator matches request paths against `servers`; the caller gives it
    // the base path we derived (the real servers use variables for whole URLs).
    apiSpec: apiSpec as never,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: options.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    // The contract has no multipart bodies: no upload parser in the chain.
    fileUploader: false,
    ignoreUndocumented: false,
    formats: { int64: int64Format },
  }) as RequestHandler[];
}

/**
 * Reduces Content-Type to its media type once the body is parsed. The
 * validator compiles and keeps a request validator per distinct Content-Type
 * value, parameters included, so `application/json; x=<random>` on every
 * request would grow its caches (memory and a schema compile each) forever.
 */
const reduceContentType: Stage = (req) => {
  const contentType = req.headers['content-type'];
  if (contentType !== undefined) req.headers['content-type'] = contentType.split(';', 1)[0]!.trim().toLowerCase();
};
const mediaTypeOnly = asMiddleware(reduceContentType);
