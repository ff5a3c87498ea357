import type { ApiKeyRepository } from '../storage';
import type { Caller } from '../keys';

/**
 * Temporary bans of callers (API keys, token subjects) that keep sending after a 429. Behind an interface so
 * several instances can share bans (Redis) instead of holding them in memory.
 */
export interface BanList {
  /** The end of the caller's ban (ms since epoch), or undefined when it is not banned now. */
  bannedUntil(principal: string, now: number): Promise<number | undefined>;
  /** Bans the caller until `untilMs` (an API key's ban is also stored with the key). */
  ban(caller: Pick<Caller, 'principal' | 'keyId'>, untilMs: number): Promise<void>;
}

/**
 * Ban ends held in memory, the later end winning when a key is banned twice
 * (a ban relayed from another worker may arrive after a local one); an ended
 * ban is forgotten when it is next looked up.
 *
 * @example const bans = new ExpiringBans(); bans.remember('key:4', Date.now() + 60_000); bans.until('key:4', Date.now());
 */
export class ExpiringBans<K extends string | number = string | number> {
  private readonly ends = new Map<K, number>();

  remember(principal: K, untilMs: number): void {
    this.ends.set(principal, Math.max(untilMs, this.ends.get(principal) ?? 0));
  }

  /** The end of the caller's ban, or undefined when it is not banned at `now`. */
  until(principal: K, now: number): number | undefined {
    const until = this.ends.get(principal);
    if (until === undefined) return undefined;
    if (until > now) return until;
    this.ends.delete(principal);
    return undefined;
  }

  /** Every ban still running at `now` (the ended ones are forgotten). */
  live(now: number): Array<[principal: K, untilMs: number]> {
    for (const [principal, until] of this.ends) if (until <= now) this.ends.delete(principal);
    return [...this.ends];
  }
}

/**
 * Bans held in this process, and written to the database so that `keys list`
 * shows them and they survive a restart (the authenticated caller carries the
 * stored ban, which `rateLimits` also honours).
 */
export class MemoryBanList implements BanList {
  private readonly bans = new ExpiringBans<string>();

  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async bannedUntil(principal: string, now: number): Promise<number | undefined> {
    return this.bans.until(principal, now);
  }

  async ban(caller: Pick<Caller, 'principal' | 'keyId'>, untilMs: number): Promise<void> {
    this.remember(caller.principal, untilMs);
    if (caller.keyId !== undefined) await this.apiKeys.setBannedUntil(caller.keyId, new Date(untilMs));
  }

  /** A ban made elsewhere (another worker), already stored there: held here, not stored again. */
  remember(principal: string, untilMs: number): void {
    this.bans.remember(principal, untilMs);
  }
}
