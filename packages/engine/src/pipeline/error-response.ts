import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { noSuchRoute } from '../errors/api-error';
import { toApiError } from '../errors/to-api-error';
import { loggedPath } from './logged-path';
import { sendError } from '../response/send-error';
import { contextOf } from '../context/request-context';

/** Where the engine logs: a pino logger fits, and so does `console`. */
export interface EngineLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * The one place errors become responses: every failure is an Error object
 * `{code, message, status}` served as application/json, or as RFC 9457
 * problem details when the request's document declares them (`problems`) and
 * its `Accept` prefers them. Bugs are logged once,
 * here, with their stack, the request id and the
 * operation, and answered with a bland 500. Request bodies are never logged.
 */
export function errorMapper(
  logger: EngineLogger,
  operationOf?: (req: Request) => string,
  now: () => number = Date.now,
  problems: (req: Request) => boolean = () => false,
): ErrorRequestHandler {
  // During an outage every request fails the same way: one warning per interval is enough.
  const UNAVAILABLE_LOG_INTERVAL_MS = 10_000;
  let lastUnavailableLog = 0;
  return (error, req, res, _next) => {
    const apiError = toApiError(error, req);
    // The path only: a query string may carry secrets or personal data.
    const where = { requestId: req.id, operation: operationOf?.(req), method: req.method, path: loggedPath(req) };
    if (apiError.code === 'unavailable') {
      if (now() - lastUnavailableLog >= UNAVAILABLE_LOG_INTERVAL_MS) {
        lastUnavailableLog = now();
        logger.warn({ err: (error as Error).message, ...where }, 'dependency unavailable: answering 503');
      }
    } else if (apiError.status >= 500 && apiError.code !== 'not_implemented') {
      // A stub's 501 is the framework's answer, like a 401: the access log has it.
      logger.error({ err: error, ...where }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = apiError.toBody();
    contextOf(req).refusal = apiError.logDetail === undefined ? body : { ...body, message: apiError.logDetail };
    sendError(res, req.headers.accept, problems(req), apiError.status, body, apiError.headers);
  };
}

/** Paths outside the contract (and outside the docs/health routes). */
export const unknownRoute: RequestHandler = () => {
  throw noSuchRoute();
};
