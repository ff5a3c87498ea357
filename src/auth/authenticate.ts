import type { Stage } from '../pipeline/stage';
import { LRUCache } from 'lru-cache';
import type { ApiKeyRepository } from '../storage/storage';
import { ApiError } from '../errors/api-error';
import type { Caller } from './caller';
import type { KeyChanges } from './key-changes';
import { hashApiKey, looksLikeApiKey } from './api-key';
import { bearerToken } from './bearer';
import { isUnavailable } from '../errors/unavailable';
import { toApiError } from '../errors/to-api-error';

const unauthorized = (message: string): ApiError =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="pet-adoption"' });

declare module 'express-serve-static-core' {
  interface Request {
    /** The calling key, set by `authenticate` when the key is valid. */
    caller?: Caller;
    /** Why the request is not authenticated, set by `authenticate` otherwise. */
    authFailure?: ApiError;
  }
}

/** Told whether each well-formed key was found in the cache (metrics). */
export type KeyCacheObserver = (result: 'hit' | 'miss') => void;

/**
 * Resolves `Authorization: Bearer <key>` to the calling key (`req.caller`) or
 * records why not (`req.authFailure`); `requireCaller` turns the latter into a
 * 401 once rate limiting has counted the attempt. The scheme is
 * case-insensitive (RFC 9110). Only valid keys are cached, so a key created by
 * the CLI works at once and a revoked one is refused within `cacheTtlMs`
 * (at once on this instance, and on every instance sharing the key-change signal).
 *
 * The cache is keyed by the key itself (taken from the header by one regex,
 * whatever the spelling of the scheme and spaces): a cached key costs a
 * lookup, no SHA-256 and no query. Only valid keys get in, one entry per key,
 * and the cache is bounded.
 */
export interface AuthenticationOptions {
  apiKeys: ApiKeyRepository;
  /** How long a valid key is reused without a query: a revoked key stops working within this time. */
  cacheTtlMs: number;
  /** The cross-instance "key changed" signal, so a revocation or plan change drops the cached key at once. */
  keyChanges?: KeyChanges;
  observeCache?: KeyCacheObserver;
}

/**
 * @example const identify = authenticate({ apiKeys: storage.apiKeys, cacheTtlMs: config.keyCacheTtlMs });
 */
export function authenticate({ apiKeys, cacheTtlMs, keyChanges, observeCache = () => undefined }: AuthenticationOptions): Stage {
  const cache = new LRUCache<string, Caller>({ max: 10_000, ttl: cacheTtlMs, ttlAutopurge: false });
  keyChanges?.subscribe((keyId) => {
    cache.forEach((caller, key) => {
      if (caller.id === keyId) cache.delete(key);
    });
  });

  /** The well-formed key of the header; throws the 401 otherwise. */
  function keyOf(header: string | undefined): string {
    if (header === undefined) throw unauthorized('missing API key: send Authorization: Bearer <API_KEY>');
    const key = bearerToken(header);
    if (key === undefined) throw unauthorized('Authorization header must use the Bearer scheme: Bearer <API_KEY>');
    if (!looksLikeApiKey(key)) throw unauthorized('invalid API key');
    return key;
  }

  async function lookUp(key: string): Promise<Caller> {
    observeCache('miss');
    const hash = hashApiKey(key);
    // Looked up by SHA-256 of the key: the lookup's timing says nothing usable
    // about any stored key, so no separate constant-time comparison is needed.
    const record = await apiKeys.findByHash(hash);
    if (!record) throw unauthorized('invalid API key');
    if (record.revokedAt !== null) throw unauthorized('API key has been revoked');
    const caller: Caller = {
      id: record.id,
      plan: record.plan,
      label: record.label,
      requestsPerMinute: record.requestsPerMinute,
      requestsPerDay: record.requestsPerDay,
      bannedUntil: record.bannedUntil,
    };
    cache.set(key, caller);
    return caller;
  }

  return (req) => {
    if (req.anonymousAccess) return; // `security: []`: the key is not examined
    let key: string;
    try {
      key = keyOf(req.headers.authorization);
    } catch (error) {
      // Recorded, not thrown: rate limiting still counts the request (per IP)
      // and sets its headers before requireCaller answers 401.
      req.authFailure = error as ApiError;
      return;
    }
    const cached = cache.get(key);
    if (cached) {
      observeCache('hit');
      req.caller = cached;
      return;
    }
    return lookUp(key).then(
      (caller) => {
        req.caller = caller;
      },
      (error: unknown) => {
        // Recorded, not thrown: rate limiting still counts the request (per IP)
        // and sets its headers before requireCaller answers 401 (or 503).
        if (error instanceof ApiError) req.authFailure = error;
        else if (isUnavailable(error)) req.authFailure = toApiError(error);
        else throw error;
      },
    );
  };
}

/** Answers 401 (with `WWW-Authenticate`) unless `authenticate` found a valid key or the operation is anonymous. */
export const requireCaller: Stage = (req) => {
  if (!req.caller && !req.anonymousAccess) throw req.authFailure ?? unauthorized('missing API key: send Authorization: Bearer <API_KEY>');
};
