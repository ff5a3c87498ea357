import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenApiDocument } from '../spec/load-spec';
import { singleValuedQuery } from './query-shape';

/**
 * express-openapi-validator's `int64` only checks "is an integer", so 2^63 and
 * 1e20 pass. Ids must be exact in JavaScript: safe integers only.
 */
export const int64Format = {
  type: 'number' as const,
  validate: (value: number): boolean => Number.isSafeInteger(value),
};

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
  const validator = OpenApiValidator.middleware({
    // The validator matches request paths against `servers`; give it the base
    // path we derived (the real servers use variables for whole URLs).
    apiSpec: { ...structuredClone(spec), servers: [{ url: basePath }] } as never,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: options.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    // The contract has no multipart bodies: no upload parser in the chain.
    fileUploader: false,
    ignoreUndocumented: false,
    formats: { int64: int64Format },
  }) as RequestHandler[];
  // After the validator's own route lookup, so an unknown path or method is
  // still its 404/405, not a 400 about the query.
  const afterLookup = validator.findIndex((middleware) => middleware.name === 'metadataMiddleware') + 1;
  if (afterLookup === 0) throw new Error('express-openapi-validator: metadataMiddleware not found (has its middleware chain changed?)');
  return [mediaTypeOnly, ...validator.slice(0, afterLookup), singleValuedQuery, ...validator.slice(afterLookup)];
}

/**
 * Reduces Content-Type to its media type once the body is parsed. The
 * validator compiles and keeps a request validator per distinct Content-Type
 * value, parameters included, so `application/json; x=<random>` on every
 * request would grow its caches (memory and a schema compile each) forever.
 */
const mediaTypeOnly: RequestHandler = (req, _res, next) => {
  const contentType = req.headers['content-type'];
  if (contentType !== undefined) req.headers['content-type'] = contentType.split(';', 1)[0]!.trim().toLowerCase();
  next();
};
