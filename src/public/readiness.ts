import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const CHECK_TIMEOUT_MS = 2_000;

/**
 * How long a readiness result is reused: however many load balancers ask, and
 * however often, the dependencies are checked at most once in this interval.
 */
export const READINESS_REUSE_MS = 1_000;

type Readiness = { ready: boolean; checks: Record<string, 'ok' | 'error'> };

function withTimeout(check: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    check()
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}

/** Runs every check at once; a failure is logged and reported as `error` (never a rejection). */
async function readinessOf(checks: Record<string, () => Promise<void>>, log: { warn(fields: object, message: string): void }): Promise<Readiness> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check);
        return [name, 'ok'] as const;
      } catch (error) {
        // The detail (addresses, user names) goes to the log, not to anonymous callers.
        log.warn({ check: name, err: (error as Error).message }, 'readiness check failed');
        return [name, 'error'] as const;
      }
    }),
  );
  return { ready: results.every(([, result]) => result === 'ok'), checks: Object.fromEntries(results) };
}

/**
 * `GET /readyz`: 200 when every dependency answers, else 503, with one entry
 * per check, e.g. `{"status":"unavailable","checks":{"database":"ok","redis":"error"}}`.
 * A load balancer stops sending traffic to an instance that is not ready.
 * The route is not rate limited, so the checks are shared instead: requests
 * that arrive while they run wait for that run, and its result answers
 * every request for `READINESS_REUSE_MS` after it (`now`: the clock, ms).
 */
export function readinessRoute(checks: Record<string, () => Promise<void>>, logger: Pick<Logger, 'warn'>, now: () => number = Date.now): RequestHandler {
  let latest: { readiness: Promise<Readiness>; settledAt?: number } | undefined;
  return async (req, res) => {
    if (!latest || (latest.settledAt !== undefined && now() - latest.settledAt >= READINESS_REUSE_MS)) {
      // The request that starts the run logs its failures, with its id.
      const run: NonNullable<typeof latest> = {
        readiness: readinessOf(checks, { warn: (fields, message) => logger.warn({ requestId: req.id, ...fields }, message) }),
      };
      void run.readiness.then(() => {
        run.settledAt = now();
      });
      latest = run;
    }
    const { ready, checks: results } = await latest.readiness;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks: results });
  };
}
