import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { ApiKeyRepository } from '../storage';
import { ApiError } from '@spec-first/engine';
import type { CredentialCheck } from '@spec-first/engine';
import type { Plan } from '../plans';
import { keyPrincipal, tokenPrincipal, type Caller } from './caller';
import type { KeyChanges } from './key-changes';
import { hashApiKey, looksLikeApiKey } from './api-key';

/** Told whether each well-formed key was found in the cache (metrics). */
export type KeyCacheObserver = (result: 'hit' | 'miss') => void;

export interface KeyCheckOptions {
  apiKeys: ApiKeyRepository;
  /** How long a valid key is reused without a query: a revoked key stops working within this time. */
  cacheTtlMs: number;
  /** The cross-instance "key changed" signal, so a revocation or plan change drops the cached key at once. */
  keyChanges?: KeyChanges;
  observeCache?: KeyCacheObserver;
  /** The plan of every caller that presents an access token (`OAUTH2_PLAN`). */
  tokenPlan: Plan;
  /**
   * Runs before a key that is neither cached nor known valid lately is looked
   * up in the database, and throws to refuse the request without the query
   * (a client already refused in its per-address window: a flood of random
   * keys costs nothing).
   */
  beforeLookup?: (req: Request) => void;
}

/**
 * Keys that were valid lately, and how long they are remembered: they are looked up again whatever
 * their address, so a client behind an address others flood keeps working.
 */
const KNOWN_KEYS = 10_000;
const KNOWN_KEY_TTL_MS = 86_400_000;

/**
 * What the service makes of a credential the engine verified
 * (packages/engine/src/security/authenticate.ts): an API key, however the scheme
 * carries it, is looked up by its SHA-256 (a cached key costs a lookup, no
 * hash and no query; only valid keys are cached, one entry per key, the
 * cache bounded, so a key created by the CLI works at once and a revoked one
 * is refused within `cacheTtlMs`, at once on every instance sharing the
 * key-change signal); a key neither cached nor valid lately passes
 * `beforeLookup` before its query; an access token's subject is a caller of
 * the token plan, its limits and bans keyed by `token:<sub>`.
 *
 * @example const check = keyCheck({ apiKeys: storage.apiKeys, cacheTtlMs: 2_000, tokenPlan: 'free' });
 */
export function keyCheck({
  apiKeys,
  cacheTtlMs,
  keyChanges,
  observeCache = () => undefined,
  tokenPlan,
  beforeLookup,
}: KeyCheckOptions): CredentialCheck<Caller> {
  const cache = new LRUCache<string, Caller>({ max: 10_000, ttl: cacheTtlMs, ttlAutopurge: false });
  const known = new LRUCache<string, true>({ max: KNOWN_KEYS, ttl: KNOWN_KEY_TTL_MS, ttlAutopurge: false });
  keyChanges?.subscribe((keyId) => {
    cache.forEach((caller, key) => {
      if (caller.keyId === keyId) cache.delete(key);
    });
  });

  async function lookUp(key: string, req: Request): Promise<Caller> {
    observeCache('miss');
    if (!known.has(key)) beforeLookup?.(req);
    // Looked up by SHA-256 of the key: the lookup's timing says nothing usable
    // about any stored key, so no separate constant-time comparison is needed.
    const record = await apiKeys.findByHash(hashApiKey(key));
    if (!record) throw invalid('invalid API key');
    // The caller is told no more than for a key that never existed: "revoked" would confirm that a leaked key was genuine.
    if (record.revokedAt !== null) throw new ApiError(401, 'unauthorized', 'invalid API key', {}, 'API key has been revoked');
    const caller: Caller = {
      principal: keyPrincipal(record.id),
      keyId: record.id,
      plan: record.plan,
      role: record.role,
      label: record.label,
      requestsPerMinute: record.requestsPerMinute,
      requestsPerDay: record.requestsPerDay,
      bannedUntil: record.bannedUntil,
    };
    cache.set(key, caller);
    known.set(key, true);
    return caller;
  }

  return {
    key(key, _scheme, req) {
      if (!looksLikeApiKey(key)) throw invalid('invalid API key');
      const cached = cache.get(key);
      if (!cached) return lookUp(key, req);
      observeCache('hit');
      return cached;
    },
    token(token) {
      return {
        principal: tokenPrincipal(token.subject),
        keyId: undefined,
        plan: tokenPlan,
        role: 'customer',
        label: `token ${token.subject}`,
        requestsPerMinute: null,
        requestsPerDay: null,
        bannedUntil: null,
      };
    },
  };
}

const invalid = (message: string): ApiError => new ApiError(401, 'unauthorized', message);
