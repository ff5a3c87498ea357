/**
 * The rate limits: per-caller and per-address windows, bans, refused
 * addresses, and the weight of streams. Code outside this folder imports
 * them from here (test/layout.test.ts checks it).
 *
 * @example const stage = rateLimits(settings, memoryStores(), new MemoryBanList(storage.apiKeys), logger);
 */
export { ExpiringBans, MemoryBanList, type BanList } from './ban-list';
export { chargeOneRequest, memoryStores, rateLimits, type RateLimitStores } from './rate-limits';
export { addressKey, clientKey, RefusedAddresses } from './refused-addresses';
