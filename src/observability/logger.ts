import cluster from 'node:cluster';
import { fstatSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import type { LogFormat } from '../config';

/**
 * Lines gathered before one write to stdout. Each write is a round trip
 * through libuv's thread pool (a thread woken, a completion queued back),
 * paid in the CPU the requests need: fewer, larger writes cost less. A quiet
 * service's lines still leave within `FLUSH_INTERVAL_MS`.
 */
const BATCH_BYTES = 16_384;
/** The same on a pipe shared with other workers: below `PIPE_BUF`, as sonic-boom needs it below the largest write. */
const SHARED_PIPE_BATCH_BYTES = 3_072;
/**
 * The most one write carries. SonicBoom keeps one write in flight and starts
 * the next when it completes, about once per turn of a busy event loop, so a
 * write must be able to carry more than a turn's worth of access lines, or
 * the backlog (and memory) grows for as long as the load lasts. SonicBoom
 * never splits a line between writes.
 */
const MAX_WRITE = 65_536;
/**
 * A write to a pipe of at most this size is atomic. The workers of
 * `WORKERS=N` share the primary's stdout; when it is a pipe, their writes are
 * kept to this size so their lines never interleave mid-line.
 */
const PIPE_BUF = 4_096;
/** A quiet service's lines still reach stdout within this time. */
const FLUSH_INTERVAL_MS = 250;

/**
 * Logs on stdout (or `destination`); API keys can never be logged, even by
 * accident: the Authorization and Cookie headers, and the headers, query
 * parameters and cookies named in `secretNames` (apiKey schemes), are redacted. `pretty` formats in-process with pino-pretty, a dev dependency
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
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json', secretNames: readonly string[] = []): Logger {
  const options = {
    level,
    // pino's own clock, with the number written by toFixed: String() and templates keep each new number's text in V8's number-to-string cache.
    timestamp: () => `,"time":${Date.now().toFixed(0)}`,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'apiKey',
        'key',
        'req.headers.cookie',
        'headers.cookie',
        'cookie',
        // The names an API key is sent under besides Authorization (apiKey schemes: header, query parameter, cookie).
        ...secretNames.flatMap((name) => [
          `req.headers[${JSON.stringify(name.toLowerCase())}]`,
          `headers[${JSON.stringify(name.toLowerCase())}]`,
          `query[${JSON.stringify(name)}]`,
          `cookies[${JSON.stringify(name)}]`,
        ]),
      ],
      censor: '[redacted]',
    },
  };
  if (format === 'pretty') {
    const { default: pretty } = require('pino-pretty') as typeof PinoPretty;
    const colorize = !destination && process.stdout.isTTY;
    return pino(options, pretty({ destination: destination ?? 1, colorize, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
  }
  if (destination || level === 'silent') return pino(options, destination);
  return pino(options, bufferedDestination(1, { sharedPipe: cluster.isWorker && !fstatSync(1).isFile() }));
}

/**
 * The asynchronous, buffered writer of the JSON lines: batches of
 * `BATCH_BYTES`, writes of at most `MAX_WRITE` (on a pipe shared with other
 * workers, `SHARED_PIPE_BATCH_BYTES` and `PIPE_BUF`), flushed every
 * `FLUSH_INTERVAL_MS` when quiet.
 *
 * @example const logger = pino({}, bufferedDestination(1, { sharedPipe: false }));
 */
export function bufferedDestination(dest: number | string, { sharedPipe }: { sharedPipe: boolean }): ReturnType<typeof pino.destination> {
  return pino.destination({
    dest,
    sync: false,
    minLength: sharedPipe ? SHARED_PIPE_BATCH_BYTES : BATCH_BYTES,
    maxWrite: sharedPipe ? PIPE_BUF : MAX_WRITE,
    periodicFlush: FLUSH_INTERVAL_MS,
  });
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
