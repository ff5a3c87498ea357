import type { Principal } from '@spec-first/engine';
import type { Plan } from '../plans';
import type { Role } from '../storage';

/**
 * The authenticated client of a request, as the service knows it: an API key
 * (of any scheme that carries one: bearer, basic, an apiKey header, query
 * parameter or cookie) or an OAuth 2.0 / OpenID Connect token's subject. Its
 * plan decides its rate limits; `principal` keys its counters, bans and
 * Idempotency-Keys, whichever way it authenticated.
 */
export interface Caller extends Principal {
  /** The API key's id; undefined for a token. */
  readonly keyId: number | undefined;
  readonly plan: Plan;
  /** `staff` see and change every order and change pets; customers only their own orders. A token's subject is a customer. */
  readonly role: Role;
  readonly label: string;
  /** An enterprise key's own limits (null for the other plans and for tokens). */
  readonly requestsPerMinute: number | null;
  readonly requestsPerDay: number | null;
  /** The stored end of a ban of the key (ISO time), if any. */
  readonly bannedUntil: string | null;
}

/** The principal of an API key: `key:12` (also the rate-limit counter's name, unchanged since keys were the only callers). */
export const keyPrincipal = (keyId: number): string => `key:${keyId}`;

/** The principal of a token's subject: `token:<sub>`. */
export const tokenPrincipal = (subject: string): string => `token:${subject}`;
