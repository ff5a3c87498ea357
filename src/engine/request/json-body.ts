import express from 'express';
import { isUtf8 } from 'node:buffer';
import { ApiError } from '../errors/api-error';
import { fromMiddleware, type Stage } from '../pipeline/stage';

/** Largest JSON body read; a larger one gets 413 (also when sent chunked). */
export const MAX_BODY = '1mb';

/**
 * The JSON body parser, stricter than body-parser alone about text:
 *
 * - a UTF-8 body must be valid UTF-8 (body-parser would silently turn bad
 *   bytes into U+FFFD and store them);
 * - no string (value or property name) may contain U+0000 or an unpaired
 *   surrogate (`"\u0000"`, `"\ud800"`): PostgreSQL cannot store the former,
 *   neither backend can round-trip the latter, and no client means either.
 *
 * Each is a 400 `invalid_request`. The walk is iterative, so deeply nested
 * JSON costs no stack.
 *
 * A request without a body (no Content-Length, no Transfer-Encoding: what
 * body-parser calls "has no body") skips the parser entirely.
 *
 * @example stages.push(jsonBody());
 */
export function jsonBody(): Stage {
  const parse = fromMiddleware(
    express.json({
      limit: MAX_BODY,
      verify: (_req, _res, buffer, encoding) => {
        if (encoding.toLowerCase() === 'utf-8' && !isUtf8(buffer)) {
          throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
        }
      },
    }),
  );
  return (req, res) => {
    if (!hasBody(req.headers)) return;
    return parse(req, res).then(() => refuseUnsafeStrings(req.body));
  };
}

/** type-is's `hasBody`: a body is announced by Transfer-Encoding or a Content-Length. */
const hasBody = (headers: { 'transfer-encoding'?: string; 'content-length'?: string }): boolean =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && !Number.isNaN(Number(headers['content-length'])));

/** With the u flag a surrogate pair is one code point, so this matches only unpaired halves. */
const LONE_SURROGATE = /\p{Cs}/u;

function refuseUnsafeStrings(body: unknown): void {
  if (body === undefined) return;
  const pending: unknown[] = [body];
  const check = (text: string): void => {
    if (text.includes('\0')) throw new ApiError(400, 'invalid_request', 'body must not contain the NUL character (\\u0000)');
    if (LONE_SURROGATE.test(text)) throw new ApiError(400, 'invalid_request', 'body must not contain unpaired UTF-16 surrogates');
  };
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') check(value);
    else if (Array.isArray(value)) for (const item of value) pending.push(item);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        check(key);
        pending.push(item);
      }
    }
  }
}
