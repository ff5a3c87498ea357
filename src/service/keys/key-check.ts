import { LRUCache } from 'lru-cache';
import type { ApiKeyRepository } from '../storage/storage';
import { ApiError } from '../../engine/errors/api-error';
import type { CredentialCheck } from '../../engine/security/authenticate';
import type { Plan } from '../plans/plans';
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
}

/**
 * What the service makes of a credential the engine verified
 * (src/engine/security/authenticate.ts): an API key, however the scheme
 * carries it, is looked up by its SHA-256 (a cached key costs a lookup, no
 * hash and no query; only valid keys are cached, one entry per key, the
 * cache bounded, so a key created by the CLI works at once and a revoked one
 * is refused within `cacheTtlMs`, at once on every instance sharing the
 * key-change signal); an access token's subject is a caller of the token
 * plan, its limits and bans keyed by `token:<sub>`.
 *
 * @example const check = keyCheck({ apiKeys: storage.apiKeys, cacheTtlMs: 2_000, tokenPlan: 'free' });
 */
export function keyCheck({ apiKeys, cacheTtlMs, keyChanges, observeCache = () => undefined, tokenPlan }: KeyCheckOptions): CredentialCheck {
  const cache = new LRUCache<string, Caller>({ max: 10_000, ttl: cacheTtlMs, ttlAutopurge: false });
  keyChanges?.subscribe((keyId) => {
    cache.forEach((caller, key) => {
      if (caller.keyId === keyId) cache.delete(key);
    });
  });

  async function lookUp(key: string): Promise<Caller> {
    observeCache('miss');
    // Looked up by SHA-256 of the key: the lookup's timing says nothing usable
    // about any stored key, so no separate constant-time comparison is needed.
    const record = await apiKeys.findByHash(hashApiKey(key));
    if (!record) throw invalid('invalid API key');
    if (record.revokedAt !== null) throw invalid('API key has been revoked');
    const caller: Caller = {
      principal: keyPrincipal(record.id),
      keyId: record.id,
      plan: record.plan,
      label: record.label,
      requestsPerMinute: record.requestsPerMinute,
      requestsPerDay: record.requestsPerDay,
      bannedUntil: record.bannedUntil,
    };
    cache.set(key, caller);
    return caller;
  }

  return {
    key(key) {
      if (!looksLikeApiKey(key)) throw invalid('invalid API key');
      const cached = cache.get(key);
      if (!cached) return lookUp(key);
      observeCache('hit');
      return cached;
    },
    token(token) {
      return {
        principal: tokenPrincipal(token.subject),
        keyId: undefined,
        plan: tokenPlan,
        label: `token ${token.subject}`,
        requestsPerMinute: null,
        requestsPerDay: null,
        bannedUntil: null,
      };
    },
  };
}

const invalid = (message: string): ApiError => new ApiError(401, 'unauthorized', message);
