import pino, { type DestinationStream, type Logger } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import type { LogFormat } from '../config';


/**
 * Logs on stdout (or `destination`); API keys can never be logged, even by
 * accident. `pretty` formats in-process with pino-pretty, a dev dependency
 * loaded only then (config.ts refuses LOG_FORMAT=pretty when it is absent).
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
  return pino(options, destination);
}
