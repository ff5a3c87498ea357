import pino, { type DestinationStream, type Logger } from 'pino';

/** JSON logs (stdout by default); API keys can never be logged, even by accident. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
