import pino, { type Logger } from 'pino';

/** JSON logs on stdout; API keys can never be logged, even by accident. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'], censor: '[redacted]' },
  });
}
