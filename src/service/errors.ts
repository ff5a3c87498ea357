import type { components } from '../../generated/v2/openapi';
import { type ApiError, errorBody } from '@spec-first/engine';

/** The codes of the Error objects the service answers with itself (the engine has its own). */
export const SERVICE_ERROR_CODES = [
  'key_temporarily_banned',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  'staff_only',
  'pet_not_available',
  'invalid_transition',
] as const;
export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];

/** The codes the engine answers with itself: the code of its default `ApiError`. */
type EngineErrorCode = ApiError['code'];

/** The contract's `ErrorCode` enum: the newest version's (earlier versions list the codes their operations can answer). */
export type ErrorCode = components['schemas']['ErrorCode'];

/**
 * Every code the engine or the service can answer with is in the contract's
 * enum: a code added to either without the contract is a compile error here.
 */
export const ENUM_COVERS_EVERY_CODE: [Exclude<EngineErrorCode | ServiceErrorCode, ErrorCode>] extends [never]
  ? true
  : Exclude<EngineErrorCode | ServiceErrorCode, ErrorCode> = true;

/** Error bodies for the statuses handlers return themselves. */
export const notFound = (message: string) => errorBody(404, 'not_found', message);
/** A page cursor this server did not issue for this query (listPets, listStoreOrders). */
export const cursorNotIssued = () =>
  errorBody(400, 'invalid_request', 'query.cursor was not issued by this server for this limit and status: follow the Link header of the previous page');
export const staffOnly = (message: string) => errorBody(403, 'staff_only', message);
export const conflict = <C extends 'pet_not_available' | 'invalid_transition'>(code: C, message: string) => errorBody(409, code, message);
