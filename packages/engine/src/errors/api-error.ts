/**
 * The codes of the Error objects the engine answers with itself (a document
 * that publishes an `ErrorCode` enum lists these; the service adds its own).
 */
export const ENGINE_ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'insufficient_scope',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'unsupported_media_type',
  'payload_too_large',
  'uri_too_long',
  'headers_too_large',
  'request_timeout',
  'rate_limited',
  'gone',
  'precondition_failed',
  'precondition_required',
  'not_implemented',
  'unavailable',
  'internal_error',
] as const;

export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

/** The Error object every failure is answered with. */
export interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

/** The Error object of an answer body, or undefined when the body is not one. */
export function asErrorBody(body: unknown): ErrorBody | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { code, message, status } = body as Partial<ErrorBody>;
  return typeof code === 'string' && typeof message === 'string' && typeof status === 'number' ? { code, message, status } : undefined;
}

/**
 * An error that becomes an Error object response. Thrown by the phases
 * (authentication, rate limits, validation) and mapped by the error mapper;
 * handlers return their declared error responses instead. Its code is one of
 * the engine's (`EngineErrorCode`) unless the type argument names the
 * user's own codes, so a code nobody declared is a compile error where it is
 * thrown.
 *
 * @example throw new ApiError(401, 'unauthorized', 'missing API key', { 'WWW-Authenticate': 'Bearer' })
 * @example throw new ApiError(401, 'unauthorized', 'invalid API key', {}, 'API key has been revoked') // the log knows more than the caller
 * @example throw new ApiError<'rate_limited'>(429, 'rate_limited', 'too many requests', { 'Retry-After': '5' })
 */
export class ApiError<Code extends string = EngineErrorCode> extends Error {
  constructor(
    readonly status: number,
    readonly code: NoInfer<Code>,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** What the access log says instead of the message, where the caller must learn less than the operator. */
    readonly logDetail?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** An Error object. @example errorBody(404, 'not_found', 'pet 7 does not exist') */
export const errorBody = <C extends string>(status: number, code: C, message: string): { code: C; message: string; status: number } => ({
  code,
  message,
  status,
});

/** The one 404 for a request that names no route of the API (a path outside every base path, or unknown under one). */
export const noSuchRoute = (): ApiError => new ApiError(404, 'not_found', 'no such route: see /docs for the API reference');

/** The stub's answer. */
export const notImplemented = (operationId: string) => errorBody(501, 'not_implemented', `${operationId} is declared in the contract but not implemented yet`);
