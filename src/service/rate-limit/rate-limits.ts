import type { Request } from 'express';
import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import { ApiError, contextOf, DependencyUnavailable, type Stage } from '@spec-first/engine';
import type { ErrorCode } from '../errors';
import type { Logger as PinoLogger } from 'pino';
import type { BanList } from './ban-list';
import { limitsOf } from '../plans';
import type { Plan } from '../plans';
import type { RateLimitSettings } from '../../config';
import { addressKey, type RefusedAddresses } from './refused-addresses';
import type { Caller } from '../keys';

/** Told about each refusal (429) and each new ban, for metrics. `plan` is `none` without a valid key. */
export interface RateLimitObserver {
  refused(plan: Plan | 'none', window: 'minute' | 'day' | 'ip' | 'ban'): void;
  banned(plan: Plan, window: 'minute' | 'day'): void;
}

const IGNORE: RateLimitObserver = { refused: () => undefined, banned: () => undefined };

/** Where counts live: in memory by default, a shared store (Redis) when several instances serve. */
export interface RateLimitStores {
  minute: Store;
  day: Store;
  ip: Store;
  /**
   * Counts a key in its minute and day windows in one round trip, each count
   * as of this request; without it, the two stores' increments.
   */
  incrementKey?(key: string): Promise<[ClientRateLimitInfo, ClientRateLimitInfo]>;
}

export const memoryStores = (): RateLimitStores => {
  const minute = new MemoryStore();
  const day = new MemoryStore();
  // A key's two windows in one call, as the workers' primary counts them; in memory, one after the other costs less than Promise.all.
  return { minute, day, ip: new MemoryStore(), incrementKey: async (key) => [await minute.increment(key), await day.increment(key)] };
};

interface Window {
  name: 'minute' | 'day' | 'ip';
  /** The counter's key in its store (undefined for a synthetic window). */
  key?: string;
  limit: number;
  used: number;
  windowSeconds: number;
  resetMs: number;
}

/**
 * Rate limiting for everything under the base path, on express-rate-limit's
 * `Store` interface (its MemoryStore, or rate-limit-redis): the counters are
 * called directly, both windows of a key at once, without the library's
 * middleware and its per-request option handling. IPs are keyed as the library
 * keys them (`ipKeyGenerator`: an IPv6 client counts by its /56).
 *
 * - a valid key is counted in two windows at once (per minute and per day,
 *   from its plan); a request is refused when either is exhausted;
 * - a request without a valid key is counted per client IP, so keys cannot be
 *   guessed at speed (its 401 carries the IP window's headers);
 * - a key refused `banAfter` times within a window is banned for `banSeconds`;
 * - an address refused in its window is told to `refused`, so that the key
 *   check refuses its next uncached keys without a database query.
 *
 * Every response carries X-RateLimit-Limit / -Remaining / -Reset for the window
 * that binds now (fewest requests remaining), plus the IETF draft
 * `RateLimit-Policy` and `RateLimit` fields. Must run after `authenticate`.
 */
export function rateLimits(
  settings: RateLimitSettings,
  stores: RateLimitStores,
  bans: BanList,
  logger: Pick<PinoLogger, 'warn' | 'error'>,
  observer: RateLimitObserver = IGNORE,
  /** The service's clock (ms since epoch): bans, Retry-After and the reset fields. The stores keep their windows on their own. */
  now: () => number = Date.now,
  /** Where refused addresses are remembered for the key check (RefusedAddresses.guard). */
  refused?: RefusedAddresses,
): Stage {
  const windowMs = { minute: settings.minuteWindowMs, day: settings.dayWindowMs, ip: settings.ipWindowMs } as const;
  // What the library's middleware would do once: tell each store its window.
  for (const name of ['minute', 'day', 'ip'] as const) {
    void Promise.resolve(stores[name].init?.({ windowMs: windowMs[name] } as Options)).catch((error: unknown) =>
      logger.error({ err: error }, `rate-limit store (${name}) failed to initialise`),
    );
  }
  const windowOf = (name: Window['name'], key: string, limit: number, info: ClientRateLimitInfo): Window => ({
    name,
    key,
    limit,
    used: info.totalHits,
    windowSeconds: Math.round(windowMs[name] / 1000),
    resetMs: info.resetTime?.getTime() ?? now() + windowMs[name],
  });

  /** Until when the caller's key is banned (ms since epoch), or undefined: the stored ban, or one this process or the shared state knows. */
  const bannedUntilOf = async (caller: Caller | undefined): Promise<number | undefined> => {
    if (!caller) return undefined;
    const stored = caller.bannedUntil ? Date.parse(caller.bannedUntil) : 0;
    const until = Math.max(stored, (await bans.bannedUntil(caller.principal, now())) ?? 0);
    return until > now() ? until : undefined;
  };

  /** Sets the headers and throws the 429 when a window is exhausted; store calls happen in `count`. */
  const decide = (caller: Caller | undefined, counted: Counted, headers: ResponseHeaders): void => {
    if (counted.bannedUntil !== undefined) {
      const { perMinute } = limitsOf(caller!);
      const window: Window = {
        name: 'minute',
        limit: perMinute,
        used: perMinute,
        windowSeconds: Math.round(settings.minuteWindowMs / 1000),
        resetMs: counted.bannedUntil,
      };
      setHeaders(headers, [window], window, now());
      observer.refused(caller!.plan, 'ban');
      throw tooMany('key_temporarily_banned', 'API key temporarily banned for repeated requests over the rate limit', window.resetMs);
    }
    // After a refusal the exhausted windows have 0 left and bind; the latest of them tells when to retry.
    const binding = bindingWindow(counted.windows);
    setHeaders(headers, counted.windows, binding, now());
    if (binding.used <= binding.limit) return;
    observer.refused(caller?.plan ?? 'none', binding.name);
    const scope = caller ? `API key's ${binding.name} limit` : 'limit for requests without a valid API key';
    throw tooMany('rate_limited', `rate limit exceeded: the ${scope} is ${binding.limit} requests`, binding.resetMs);
  };

  /**
   * Counts the request in its windows (per IP, or per key in both windows).
   * A refused request is handed back to the windows that still had room, and
   * a key refused more than `banAfter` times in a window is banned until the
   * later of `banSeconds` from now and the end of its exhausted windows, so it
   * is not banned again on its first request after the ban.
   */
  const count = async (req: Request, caller: Caller | undefined): Promise<Counted> => {
    const bannedUntil = await bannedUntilOf(caller);
    if (bannedUntil !== undefined) return { windows: [], bannedUntil }; // a banned key's requests are not counted
    let windows: Window[];
    if (caller) {
      const key = caller.principal;
      const { perMinute, perDay } = limitsOf(caller);
      // Both windows at once: one round trip to a shared store, not two.
      const [minute, day] = stores.incrementKey ? await stores.incrementKey(key) : await Promise.all([stores.minute.increment(key), stores.day.increment(key)]);
      windows = [windowOf('minute', key, perMinute, minute), windowOf('day', key, perDay, day)];
    } else {
      const key = addressKey(req);
      windows = [windowOf('ip', key, settings.ipPerMinute, await stores.ip.increment(key))];
    }
    const exhausted = windows.filter((window) => window.used > window.limit);
    if (exhausted.length === 0) return { windows, bannedUntil: undefined };
    if (!caller) refused?.remember(windows[0]!.key!, windows[0]!.resetMs);
    for (const window of windows.filter((candidate) => candidate.used <= candidate.limit)) {
      await stores[window.name].decrement(window.key!);
      window.used -= 1;
    }
    const refusals = Math.max(...exhausted.map((window) => window.used - window.limit));
    if (caller && refusals > settings.banAfter) {
      const until = Math.max(now() + settings.banSeconds * 1000, ...exhausted.map((window) => window.resetMs));
      await bans.ban(caller, until);
      for (const window of exhausted) observer.banned(caller.plan, window.name as 'minute' | 'day');
      return { windows, bannedUntil: until };
    }
    return { windows, bannedUntil: undefined };
  };

  const tooMany = (code: 'rate_limited' | 'key_temporarily_banned', message: string, untilMs: number): ApiError<ErrorCode> =>
    new ApiError<ErrorCode>(429, code, message, { 'Retry-After': String(Math.max(1, Math.ceil((untilMs - now()) / 1000))) });

  /**
   * When the counters cannot be read (the shared store is down) or the key
   * cannot be checked, the request is refused with 503 rather than served
   * unlimited: fail closed. Its headers say "nothing left until Retry-After".
   */
  const unavailable = (caller: Caller | undefined, headers: ResponseHeaders, error: ApiError<string>): ApiError<string> => {
    const limit = caller ? limitsOf(caller).perMinute : settings.ipPerMinute;
    const window: Window = {
      name: caller ? 'minute' : 'ip',
      limit,
      used: limit,
      windowSeconds: Math.round((caller ? settings.minuteWindowMs : settings.ipWindowMs) / 1000),
      resetMs: now() + DependencyUnavailable.retryAfterSeconds * 1000,
    };
    setHeaders(headers, [window], window, now());
    return error;
  };
  const storeUnavailable = (): ApiError =>
    new ApiError(503, 'unavailable', 'service temporarily unavailable: rate limits cannot be checked; retry later', {
      'Retry-After': String(DependencyUnavailable.retryAfterSeconds),
    });

  return async (req) => {
    const { caller, authFailure, responseHeaders } = contextOf<Caller>(req);
    // The key could not be checked (database down): not counted against the IP, answered 503.
    if (authFailure?.code === 'unavailable') throw unavailable(caller, responseHeaders, authFailure);
    let counted: Counted;
    try {
      counted = await count(req, caller);
    } catch (error) {
      throw DependencyUnavailable.is(error) ? unavailable(caller, responseHeaders, storeUnavailable()) : error;
    }
    decide(caller, counted, responseHeaders);
  };
}

/** What counting a request found: its windows, and the end of the key's ban while it is banned (ms since epoch). */
interface Counted {
  windows: Window[];
  bannedUntil: number | undefined;
}

/** The window with the fewest requests remaining; on a tie, the one that resets last. */
function bindingWindow(windows: Window[]): Window {
  const remaining = (window: Window): number => Math.max(0, window.limit - window.used);
  return windows.reduce((best, window) =>
    remaining(window) < remaining(best) || (remaining(window) === remaining(best) && window.resetMs > best.resetMs) ? window : best,
  );
}

/** The headers a request's phases record for its response. */
type ResponseHeaders = ReturnType<typeof contextOf>['responseHeaders'];

/**
 * A header name written on every response, as a string V8 keeps in one byte
 * per character, whatever the contract's YAML made V8 meet first: a
 * two-byte name turns the whole response head into one, which Node encodes
 * the slow way on every write.
 */
const oneByte = (name: string): string => Buffer.from(name, 'latin1').toString('latin1');

const X_RATELIMIT_LIMIT = oneByte('X-RateLimit-Limit');
const X_RATELIMIT_REMAINING = oneByte('X-RateLimit-Remaining');
const X_RATELIMIT_RESET = oneByte('X-RateLimit-Reset');
const RATELIMIT_POLICY = oneByte('RateLimit-Policy');
const RATELIMIT = oneByte('RateLimit');

function setHeaders(headers: ResponseHeaders, windows: Window[], binding: Window, nowMs: number): void {
  const remaining = Math.max(0, binding.limit - binding.used);
  const resetSeconds = Math.ceil(binding.resetMs / 1000);
  const remainingText = remaining.toFixed(0);
  headers.set(X_RATELIMIT_LIMIT, binding.limit.toFixed(0));
  headers.set(X_RATELIMIT_REMAINING, remainingText);
  headers.set(X_RATELIMIT_RESET, resetSeconds.toFixed(0));
  headers.set(RATELIMIT_POLICY, windows.map((window) => `"${window.name}";q=${window.limit};w=${window.windowSeconds}`).join(', '));
  headers.set(RATELIMIT, `"${binding.name}";r=${remainingText};t=${Math.max(0, Math.ceil((binding.resetMs - nowMs) / 1000)).toFixed(0)}`);
}

/**
 * Counts one more request of a request's caller (or, without one, of its
 * address) in its windows, as far as each has room: a stream's weight
 * (packages/engine/src/pipeline/stream-admission.ts) fills the windows, so the
 * caller's next requests wait for them to reset, but never takes them past
 * their limit, where it would count as refusals towards a ban. A failure of
 * the store is logged; the stream goes on.
 *
 * @example const charge = chargeOneRequest(config.rateLimits, stores, logger); charge(req);
 */
export function chargeOneRequest(settings: RateLimitSettings, stores: RateLimitStores, logger: Pick<PinoLogger, 'warn'>): (req: Request) => void {
  const fill = async (store: Store, key: string, limit: number): Promise<void> => {
    const { totalHits } = await store.increment(key);
    if (totalHits > limit) await store.decrement(key);
  };
  return (req) => {
    const { caller } = contextOf<Caller>(req);
    let counted: Promise<unknown>;
    if (caller) {
      const { perMinute, perDay } = limitsOf(caller);
      counted = Promise.all([fill(stores.minute, caller.principal, perMinute), fill(stores.day, caller.principal, perDay)]);
    } else counted = fill(stores.ip, addressKey(req), settings.ipPerMinute);
    counted.catch((error: unknown) => logger.warn({ err: (error as Error).message }, "a stream's weight could not be counted in the rate limits"));
  };
}
