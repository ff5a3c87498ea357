import type { components } from '../../generated/v1/openapi';
import { type ApiError, errorBody } from '@spec-first/engine';

/** The codes of the Error objects the service answers with itself (the engine has its own). */
export const SERVICE_ERROR_CODES = ['key_temporarily_banned', 'idempotency_key_in_use', 'idempotency_key_reused'] as const;
export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];

/** The codes the engine answers with itself: the code of its default `ApiError`. */
type EngineErrorCode = ApiError['code'];

/** The contract's `ErrorCode` enum (every version shares it). */
export type ErrorCode = components['schemas']['ErrorCode'];

/**
 * Every code the engine or the service can answer with is in the contract's
 * enum: a code added to either without the contract is a compile error here.
 */
export const ENUM_COVERS_EVERY_CODE: [Exclude<EngineErrorCode | ServiceErrorCode, ErrorCode>] extends [never]
  ? true
  : Exclude<EngineErrorCode | ServiceErrorCode, ErrorCode> = true;

/** Error bodies for the statuses handlers return themselves. */
export const notFound = (message: string): components['schemas']['Error'] => errorBody(404, 'not_found', message);
