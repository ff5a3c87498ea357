import type { Request } from 'express';
import { ApiError, noSuchRoute, type EngineErrorCode } from './api-error';
import { isUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from './unavailable';
import { describeIssue, type ValidationIssue } from './validation-issues';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  /** body-parser's error kind, e.g. `entity.parse.failed`. */
  type?: string;
  errors?: ValidationIssue[];
  headers?: Record<string, string>;
  message?: string;
}

/** The code of an engine answer, by status. */
export const CODE_BY_STATUS: Readonly<Record<number, EngineErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  410: 'gone',
  412: 'precondition_failed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  428: 'precondition_required',
  431: 'headers_too_large',
  500: 'internal_error',
  501: 'not_implemented',
  503: 'unavailable',
};

/** Turns anything thrown into an ApiError whose message is safe to send. */
export function toApiError(error: unknown, req?: Request): ApiError {
  if (error instanceof ApiError) return error;
  if (isUnavailable(error)) {
    return new ApiError(503, 'unavailable', 'service temporarily unavailable: a backing service is not answering; retry later', {
      'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  const http = (error ?? {}) as HttpLikeError;
  const status = http.status ?? http.statusCode;
  switch (http.type) {
    case 'entity.parse.failed':
      return new ApiError(400, 'invalid_request', 'body is not valid JSON');
    case 'entity.too.large':
      return new ApiError(413, 'payload_too_large', 'body must not be larger than 1 MiB (1,048,576 bytes)');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'unsupported_media_type', http.message ?? 'unsupported body encoding');
  }
  const code = status === undefined ? undefined : CODE_BY_STATUS[status];
  if (status === undefined || code === undefined || status >= 500) {
    return new ApiError(500, 'internal_error', 'internal error: the failure was logged');
  }
  switch (status) {
    case 404:
      return noSuchRoute();
    case 405:
      return new ApiError(405, code, `${req?.method} is not allowed on ${req?.path}; allowed: ${http.headers?.['Allow']}`, http.headers);
    case 415: {
      const contentType = req?.headers['content-type'];
      const hasBody = Number(req?.headers['content-length'] ?? 0) > 0 || req?.headers['transfer-encoding'] !== undefined;
      if (contentType === undefined && !hasBody) {
        return new ApiError(400, 'invalid_request', 'body is required: send JSON with Content-Type: application/json');
      }
      return new ApiError(415, code, `Content-Type must be application/json, got ${contentType ?? 'none'}`);
    }
  }
  const message = http.errors?.length ? http.errors.map(describeIssue).join('; ') : (http.message ?? code);
  return new ApiError(status, code, message, http.headers ?? {});
}
