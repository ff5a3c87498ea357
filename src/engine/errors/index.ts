/**
 * The public surface of the engine's `errors` part. The Error object: ApiError
 * and its codes, and which failures are a dependency being unavailable (503).
 * Code outside src/engine imports this part from here, never from one of its
 * files (test/layout.test.ts checks it).
 *
 * @example throw new ApiError(404, 'not_found', 'pet 7 does not exist');
 */
export { ApiError, asErrorBody, errorBody, notImplemented } from './api-error';
export type { EngineErrorCode, ErrorBody } from './api-error';
export { DependencyUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS, isUnavailable } from './unavailable';
