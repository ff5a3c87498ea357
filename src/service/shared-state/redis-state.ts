import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from 'pino';
import type { ApiKeyRepository } from '../storage';
import type { RateLimitStores } from '../rate-limit';
import { keyChangesChannel, type SharedState } from './shared-state';

/**
 * Never hang on Redis: no offline queue (a command while disconnected fails at
 * once), a 1 s command timeout, and reconnection in the background. A failure
 * surfaces as a 503 (see rateLimits), not as a queued request.
 */
function connect(redisUrl: string): Redis {
  return new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    lazyConnect: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/**
 * Connects to Redis (failing start when it is unreachable) and builds what
 * several instances share through it: rate-limit counters (atomic Lua
 * scripts with the window's expiry in Redis, via rate-limit-redis), bans, and
 * the "this key changed" signal (revocation, plan change).
 *
 * @example const shared = await openRedisState('redis://127.0.0.1:6379', apiKeys, logger, 'pas:', (kind) => metrics.redisErrors.inc({ kind }));
 */
export async function openRedisState(
  redisUrl: string,
  apiKeys: ApiKeyRepository,
  logger: Logger,
  /** Prefix of every key and channel (REDIS_KEY_PREFIX). */
  prefix: string,
  /** Told about each connection error and failed command (metrics). */
  observeError: (kind: 'connection' | 'command') => void = () => undefined,
): Promise<SharedState> {
  const client = connect(redisUrl);
  const subscriber = connect(redisUrl);
  /**
   * A command's promise, with its failure counted (and still thrown). NOSCRIPT
   * is not a failure: rate-limit-redis runs its Lua scripts by hash and loads
   * them on that reply (first use, or after Redis restarted).
   */
  const counted = <T>(command: Promise<T>): Promise<T> =>
    command.catch((error: unknown) => {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) observeError('command');
      throw error;
    });
  let warned = false;
  for (const connection of [client, subscriber]) {
    connection.on('error', (error: Error) => {
      observeError('connection');
      if (!warned) logger.warn({ err: error.message }, 'redis unreachable: rate-limited requests answer 503 until it is back');
      warned = true;
    });
    connection.on('ready', () => {
      if (warned) logger.info('redis reachable again');
      warned = false;
    });
  }
  try {
    await Promise.all([client.connect(), subscriber.connect()]);
  } catch (error) {
    client.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL: cannot connect to ${new URL(redisUrl).host}: ${(error as Error).message}`);
  }

  const store = (window: string) =>
    new RedisStore({
      prefix: `${prefix}rl:${window}:`,
      sendCommand: (command: string, ...args: string[]) => counted(client.call(command, ...args)) as never,
    });
  const channel = keyChangesChannel(prefix);
  const listeners = new Set<(keyId: number) => void>();
  await subscriber.subscribe(channel);
  subscriber.on('message', (_channel: string, message: string) => {
    for (const listener of listeners) listener(Number(message));
  });

  const stores: RateLimitStores = { minute: store('minute'), day: store('day'), ip: store('ip') };
  return {
    kind: 'redis',
    stores,
    banList: {
      async bannedUntil(principal, now) {
        const until = Number(await counted(client.get(`${prefix}ban:${principal}`)));
        return until > now ? until : undefined;
      },
      async ban(caller, untilMs) {
        await counted(client.set(`${prefix}ban:${caller.principal}`, String(untilMs), 'PX', Math.max(1, untilMs - Date.now())));
        if (caller.keyId !== undefined) await apiKeys.setBannedUntil(caller.keyId, new Date(untilMs));
      },
    },
    keyChanges: {
      subscribe: (listener) => {
        listeners.add(listener);
      },
      publish: async (keyId) => {
        await counted(client.publish(channel, String(keyId)));
      },
    },
    async ping() {
      await client.ping();
    },
    async close() {
      await Promise.allSettled([client.quit(), subscriber.quit()]);
    },
  };
}
