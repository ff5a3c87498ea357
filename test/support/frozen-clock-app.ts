import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from './test-app';
import { freezeWallClock, type WallClock } from './clock';
import { isolationName, REDIS_URL, TEST_BACKEND } from './backend';
import { openRedisState } from '../../src/shared-state/redis-state';
import { createLogger } from '../../src/observability/logger';
import type { ApiKeyRepository } from '../../src/storage/storage';

export interface FrozenClockApp {
  t: TestApp;
  /** The stopped wall clock: windows and bans end only through `clock.advance`. */
  clock: WallClock;
  /** Restores the clock and closes the app (and its Redis state). */
  close(): Promise<void>;
}

/**
 * startTestApp with the wall clock stopped (support/clock.ts): a rate-limit
 * window or a ban ends only when the test calls `clock.advance`, never because
 * the machine was slow, and nothing sleeps. On PostgreSQL+Redis the app gets
 * its Redis state (counters, bans, key changes; openRedisState as in
 * production) under a prefix of its own, whose keys `advance` ages as much as
 * the clock; on SQLite it has the in-memory stores as usual.
 *
 * @example const { t, clock, close } = await startTestAppWithFrozenClock({ rateLimits: { banAfter: 3 } });
 */
export async function startTestAppWithFrozenClock(options: Parameters<typeof startTestApp>[0] = {}): Promise<FrozenClockApp> {
  if (TEST_BACKEND !== 'postgres') {
    const clock = freezeWallClock();
    try {
      const t = await startTestApp(options);
      return { t, clock, close: async () => (clock.restore(), await t.close()) };
    } catch (error) {
      clock.restore();
      throw error;
    }
  }
  const prefix = `pas:${isolationName()}:`;
  let t: TestApp | undefined;
  // Bans are written to the database too: to the storage of the app started below.
  const apiKeys = new Proxy({} as ApiKeyRepository, {
    get:
      (_target, name: keyof ApiKeyRepository) =>
      (...args: unknown[]) =>
        (t!.storage.apiKeys[name] as (...a: unknown[]) => unknown).apply(t!.storage.apiKeys, args),
  });
  const client = new Redis(REDIS_URL!);
  const clock = freezeWallClock({ client, prefix });
  const close = async (): Promise<void> => {
    clock.restore();
    await t?.close();
    await shared?.close();
    client.disconnect();
  };
  let shared: Awaited<ReturnType<typeof openRedisState>> | undefined;
  try {
    shared = await openRedisState(REDIS_URL!, apiKeys, createLogger('silent'), prefix);
    t = await startTestApp({ ...options, ...shared.appDependencies });
  } catch (error) {
    await close();
    throw error;
  }
  return { t, clock, close };
}
