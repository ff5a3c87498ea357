import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { LRUCache } from 'lru-cache';
import { ApiError, contextOf, type Principal } from '@spec-first/engine';

/** Addresses remembered at once; past that the oldest is forgotten, which costs only a lookup. */
const MAX_ADDRESSES = 10_000;

/** The key of a request's client address in the per-address window: an IPv6 client counts by its /56, as express-rate-limit keys it. */
export const addressKey = (req: Request): string => ipKeyGenerator(req.ip ?? 'unknown');

/**
 * Who a request counts against: its caller's principal (an API key, a
 * token's subject), else its client's address.
 *
 * @example const streamClient = clientKey; streamClient(req) // 'key:12'
 */
export const clientKey = (req: Request): string => contextOf<Principal>(req).caller?.principal ?? addressKey(req);

/**
 * The client addresses this process has refused in the per-address window
 * (requests without a valid key), each until that window resets. The key
 * check asks it before it looks a key up in the database, so once an address
 * is refused, its well-formed random keys cost no query. Each process learns
 * from its own refusals: with several instances an address gets at most one
 * looked-up refusal per instance before its keys stop reaching the database.
 * Its clock is the rate-limit stores' (`Date.now`): it holds the ends of
 * their windows.
 *
 * @example const refused = new RefusedAddresses(); refused.remember('203.0.113.9', resetMs); refused.until('203.0.113.9');
 */
export class RefusedAddresses {
  private readonly refused = new LRUCache<string, number>({ max: MAX_ADDRESSES });

  /** `address` is refused until `untilMs` (ms since epoch). */
  remember(address: string, untilMs: number): void {
    this.refused.set(address, untilMs);
  }

  /** Until when `address` is refused, or undefined when it is not. */
  until(address: string): number | undefined {
    const until = this.refused.get(address);
    if (until === undefined || until > Date.now()) return until;
    this.refused.delete(address);
    return undefined;
  }

  /**
   * The key check's guard (`beforeLookup`): a 429 for a client whose
   * per-address window is exhausted, before its key costs a database query.
   * A key in the cache never comes here: its own limits and bans apply.
   */
  guard(limit: number): (req: Request) => void {
    return (req) => {
      const until = this.until(addressKey(req));
      if (until === undefined) return;
      throw new ApiError(429, 'rate_limited', `rate limit exceeded: the limit for requests without a valid API key is ${limit} requests`, {
        'Retry-After': String(Math.max(1, Math.ceil((until - Date.now()) / 1000))),
      });
    };
  }
}
