import type { Stage } from '../stage/stage';
import { ApiError } from '../errors/api-error';

/** Longest request target (path and query) served; longer ones get 414. */
export const MAX_URL_LENGTH = 8 * 1024;

/**
 * Refuses a request target over `maxLength` characters with 414
 * `uri_too_long`, before routing, validation or logging spend time on it.
 * Node's parser already caps the request line and headers together at 16 KiB
 * (431, by the user's HTTP server); this answers the range in between clearly.
 *
 * @example stages.push(limitUrlLength());
 */
export function limitUrlLength(maxLength: number = MAX_URL_LENGTH): Stage {
  return (req) => {
    if (req.originalUrl.length > maxLength) {
      throw new ApiError(414, 'uri_too_long', `the request target (path and query) must not be longer than ${maxLength} characters`);
    }
  };
}
