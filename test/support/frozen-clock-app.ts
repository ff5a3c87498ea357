import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from './test-app';
import { freezeWallClock, type WallClock } from './clock';
import { isolationName, REDIS_URL, TEST_BACKEND } from './backend';

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
 * the machine was slow, and nothing sleeps. On PostgreSQL+Redis the app's
 * Redis state (counters, bans, key changes) lives under a prefix of its own,
 * whose keys `advance` ages as much as the clock; on SQLite it has the
 * in-memory stores as usual.
 *
 * @example const { t, clock, close } = await startTestAppWithFrozenClock({ rateLimits: { banAfter: 3 } });
 */
export async function startTestAppWithFrozenClock(options: Parameters<typeof startTestApp>[0] = {}): Promise<FrozenClockApp> {
  if (TEST_BACKEND !== 'postgres') {
    const clock = freezeWallClock();
    try {
      const t = await startTestApp(options);
      const close = async (): Promise<void> => {
        clock.restore();
        await t.close();
      };
      return { t, clock, close };
    } catch (error) {
      clock.restore();
      throw error;
    }
  }
  // The app's Redis state (counters, bans, key changes) under a prefix the clock ages too.
  const prefix = `pas:${isolationName()}:`;
  const client = new Redis(REDIS_URL!);
  const clock = freezeWallClock({ client, prefix });
  let t: TestApp | undefined;
  const close = async (): Promise<void> => {
    clock.restore();
    await t?.close();
    client.disconnect();
  };
  try {
    t = await startTestApp({ ...options, settings: { ...options.settings, redisKeyPrefix: prefix } });
  } catch (error) {
    await close();
    throw error;
  }
  return { t, clock, close };
}
