import type { ApiKeyRepository } from '../storage/storage';

/**
 * Temporary bans of keys that keep sending after a 429. Behind an interface so
 * several instances can share bans (Redis) instead of holding them in memory.
 */
export interface BanList {
  /** The end of the key's ban (ms since epoch), or undefined when it is not banned now. */
  bannedUntil(keyId: number, now: number): Promise<number | undefined>;
  ban(keyId: number, untilMs: number): Promise<void>;
}

/**
 * Ban ends held in memory, the later end winning when a key is banned twice
 * (a ban relayed from another worker may arrive after a local one); an ended
 * ban is forgotten when it is next looked up.
 *
 * @example const bans = new ExpiringBans(); bans.remember(4, Date.now() + 60_000); bans.until(4, Date.now());
 */
export class ExpiringBans {
  private readonly ends = new Map<number, number>();

  remember(keyId: number, untilMs: number): void {
    this.ends.set(keyId, Math.max(untilMs, this.ends.get(keyId) ?? 0));
  }

  /** The end of the key's ban, or undefined when it is not banned at `now`. */
  until(keyId: number, now: number): number | undefined {
    const until = this.ends.get(keyId);
    if (until === undefined) return undefined;
    if (until > now) return until;
    this.ends.delete(keyId);
    return undefined;
  }

  /** Every ban still running at `now` (the ended ones are forgotten). */
  live(now: number): Array<[keyId: number, untilMs: number]> {
    for (const [keyId, until] of this.ends) if (until <= now) this.ends.delete(keyId);
    return [...this.ends];
  }
}

/**
 * Bans held in this process, and written to the database so that `keys list`
 * shows them and they survive a restart (the authenticated caller carries the
 * stored ban, which `rateLimits` also honours).
 */
export class MemoryBanList implements BanList {
  private readonly bans = new ExpiringBans();

  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async bannedUntil(keyId: number, now: number): Promise<number | undefined> {
    return this.bans.until(keyId, now);
  }

  async ban(keyId: number, untilMs: number): Promise<void> {
    this.remember(keyId, untilMs);
    await this.apiKeys.setBannedUntil(keyId, new Date(untilMs));
  }

  /** A ban made elsewhere (another worker), already stored there: held here, not stored again. */
  remember(keyId: number, untilMs: number): void {
    this.bans.remember(keyId, untilMs);
  }
}
