import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';

/** Everything jest (@sinonjs/fake-timers) can fake but Date: timers, I/O, performance.now and hrtime stay real. */
const REAL = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
  'Intl',
  'Temporal',
  'scheduler',
];

export interface WallClock {
  /** Moves the wall clock forward by `ms` (and ages the Redis keys under the given prefix as much). */
  advance(ms: number): Promise<void>;
  restore(): void;
}

/**
 * Stops the wall clock (`Date`, which the rate limits, bans and windows read)
 * of this test process until the test moves it with `advance`, so a window
 * ends only when the test says, however slow the machine: no sleeps, no race
 * with a short window. Only Date is faked; the key cache (performance.now),
 * timeouts and I/O run on real time.
 *
 * Redis keeps its own time: keys expire in real time. With `redis` and
 * `prefix` (the app's REDIS_KEY_PREFIX), `advance` also takes `ms` off the
 * time to live of every key under the prefix (deleting those it ends), as if
 * that time had passed in Redis too. Windows much longer than the test run
 * (a minute, say) then end only through `advance` there as well.
 *
 * @example const clock = freezeWallClock(); ...; await clock.advance(60_000); ...; clock.restore();
 */
export function freezeWallClock(redis?: { client: Redis; prefix: string }): WallClock {
  jest.useFakeTimers({ doNotFake: REAL as never, now: Date.now() });
  return {
    async advance(ms) {
      jest.setSystemTime(Date.now() + ms);
      if (redis) await ageKeys(redis.client, redis.prefix, ms);
    },
    restore() {
      jest.useRealTimers();
    },
  };
}

async function ageKeys(client: Redis, prefix: string, ms: number): Promise<void> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const ttl = await client.pttl(key);
      if (ttl < 0) continue; // -1: no expiry; -2: gone meanwhile
      if (ttl <= ms) await client.del(key);
      else await client.pexpire(key, ttl - ms);
    }
  } while (cursor !== '0');
}
