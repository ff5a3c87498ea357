import pino, { type DestinationStream, type Logger } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import type { LogFormat } from '../config';

/**
 * Lines gathered before one write to stdout. Below PIPE_BUF, so that
 * each write to a pipe is atomic: the workers of `WORKERS=N` share the
 * primary's stdout and their lines never interleave mid-line.
 */
const BATCH_BYTES = 3_072;
const PIPE_BUF = 4_096;
/** A quiet service's lines still reach stdout within this time. */
const FLUSH_INTERVAL_MS = 250;

/**
 * Logs on stdout (or `destination`); API keys can never be logged, even by
 * accident. `pretty` formats in-process with pino-pretty, a dev dependency
 * loaded only then (config.ts refuses LOG_FORMAT=pretty when it is absent).
 *
 * JSON lines go to stdout through an asynchronous, buffered writer: a
 * synchronous write per access line would block the request path on the
 * disk or on a slow pipe reader. The buffer is flushed by `flushLogger`
 * (SIGTERM, a fatal error) and synchronously when the process exits; a
 * SIGKILL loses what was not written yet.
 *
 * @example const logger = createLogger('info', undefined, 'pretty');
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'],
      censor: '[redacted]',
    },
  };
  if (format === 'pretty') {
    const { default: pretty } = require('pino-pretty') as typeof PinoPretty;
    const colorize = !destination && process.stdout.isTTY;
    return pino(options, pretty({ destination: destination ?? 1, colorize, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
  }
  if (destination || level === 'silent') return pino(options, destination);
  return pino(options, pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, maxWrite: PIPE_BUF, periodicFlush: FLUSH_INTERVAL_MS }));
}

/**
 * Writes every buffered line (waiting for a write in flight), bounded by
 * `timeoutMs` so a stuck stdout cannot hold an exit forever.
 *
 * @example await flushLogger(service.logger); process.exit(0);
 */
export function flushLogger(logger: Logger, timeoutMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
