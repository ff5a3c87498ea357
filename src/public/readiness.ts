import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout(check: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    check()
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}

/**
 * `GET /readyz`: 200 when every dependency answers, else 503, with one entry
 * per check, e.g. `{"status":"unavailable","checks":{"database":"ok","redis":"error"}}`.
 * A load balancer stops sending traffic to an instance that is not ready.
 */
export function readinessRoute(checks: Record<string, () => Promise<void>>, logger: Pick<Logger, 'warn'>): RequestHandler {
  return async (req, res) => {
    // The request's own logger (with its id) when the app provides one.
    const log = (req.log as Pick<Logger, 'warn'> | undefined) ?? logger;
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
    const ready = results.every(([, result]) => result === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(results) });
  };
}
