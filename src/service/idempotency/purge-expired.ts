import type { Logger } from 'pino';
import type { IdempotencyRepository } from '../storage';

/** How often expired Idempotency-Keys are deleted. */
const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Deletes expired Idempotency-Keys now and every hour (a failure is logged
 * and retried next time); clear the returned timer to stop.
 *
 * @example const purge = purgeExpiredKeys(storage.idempotencyKeys, Date.now, logger); clearInterval(purge);
 */
export function purgeExpiredKeys(records: IdempotencyRepository, now: () => number, logger: Pick<Logger, 'warn'>): NodeJS.Timeout {
  const purge = (): void => {
    records
      .purgeExpired(new Date(now()))
      .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'could not delete expired Idempotency-Keys'));
  };
  purge();
  return setInterval(purge, PURGE_INTERVAL_MS).unref();
}
