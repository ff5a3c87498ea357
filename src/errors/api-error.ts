import type { components } from '../../generated/v1/openapi';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorBody = components['schemas']['Error'];

/**
 * An error that becomes an Error object response. Thrown by middleware (auth,
 * rate limits) and mapped by the error mapper; handlers return their declared
 * error responses instead.
 *
 * @example throw new ApiError(401, 'unauthorized', 'missing API key', { 'WWW-Authenticate': 'Bearer' })
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** Error bodies for the statuses handlers return themselves. */
export const errorBody = (status: number, code: ErrorCode, message: string): ErrorBody => ({ code, message, status });
export const notFound = (message: string): ErrorBody => errorBody(404, 'not_found', message);
export const notImplemented = (operationId: string): ErrorBody =>
  errorBody(501, 'not_implemented', `${operationId} is declared in the contract but not implemented yet`);
