/**
 * The credentials of an `Authorization: Bearer <token>` header (RFC 6750; the
 * scheme is case-insensitive, RFC 9110): the token, or undefined when the
 * header uses another scheme or is malformed.
 *
 * @example bearerToken('bearer  pas_abc ') // 'pas_abc'
 */
export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1];
}

const BEARER = /^bearer +(\S+) *$/i;
