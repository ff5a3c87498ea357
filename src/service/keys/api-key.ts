import { createHash, randomBytes } from 'node:crypto';

/** Every key starts with this, so a leaked key is recognisable (and scannable). */
export const API_KEY_PREFIX = 'pas_';
const SECRET_BYTES = 32;
/** `pas_` + 43 base64url characters. */
const API_KEY_PATTERN = /^pas_[A-Za-z0-9_-]{43}$/;

/** A new random key: shown once to its owner, stored only as its hash. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The part of a key that may be shown in listings and logs. */
export const displayPrefix = (key: string): string => key.slice(0, API_KEY_PREFIX.length + 6);

export const looksLikeApiKey = (candidate: string): boolean => API_KEY_PATTERN.test(candidate);
