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
 * Bans held in this process, and written to the database so that `keys list`
 * shows them and they survive a restart (the authenticated caller carries the
 * stored ban, which `rateLimits` also honours).
 */
export class MemoryBanList implements BanList {
  private readonly bans = new Map<number, number>();

  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async bannedUntil(keyId: number, now: number): Promise<number | undefined> {
    const until = this.bans.get(keyId);
    if (until === undefined) return undefined;
    if (until > now) return until;
    this.bans.delete(keyId);
    return undefined;
  }

  async ban(keyId: number, untilMs: number): Promise<void> {
    this.bans.set(keyId, untilMs);
    await this.apiKeys.setBannedUntil(keyId, new Date(untilMs));
  }
}
