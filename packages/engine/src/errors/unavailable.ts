/**
 * Failures that mean "a backing service (database, Redis) is not answering
 * now", as opposed to a bug: they become 503 `unavailable` with Retry-After,
 * and the service recovers by itself when the dependency is back.
 */
const UNAVAILABLE_CODES = new Set([
  // Node sockets
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  // PostgreSQL: connection exceptions (class 08), shutdown (57P01-57P03), too many connections, cannot connect now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // PostgreSQL: statement_timeout or a cancelled query
  '57014',
  // SQLite: the file is locked by another writer for longer than busy_timeout
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
]);

const UNAVAILABLE_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Connection is closed',
    "Stream isn't writeable",
    'max retries per request',
    'Command timed out',
    'Client has encountered a connection error',
  ].join('|'),
  'i',
);

/**
 * A dependency of the server's own (the cluster primary, a key set) that is
 * not answering now: thrown by the code that waited for it, and a 503 like
 * a database that is down.
 *
 * @example throw new DependencyUnavailable('the cluster primary did not answer');
 */
export class DependencyUnavailable extends Error {
  override readonly name: string = 'DependencyUnavailable';

  /** Seconds a client is told to wait after a 503. */
  static readonly retryAfterSeconds = 5;

  /**
   * Whether a failure is a dependency not answering (a 503, not a bug): this
   * class, a database or Redis connection refused, reset or timed out, Redis
   * answering with an error.
   *
   * @example if (DependencyUnavailable.is(error)) return fallback();
   */
  static is(error: unknown): boolean {
    return isUnavailable(error);
  }
}

/** Seconds a client is told to wait after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = DependencyUnavailable.retryAfterSeconds;

export function isUnavailable(error: unknown): boolean {
  const candidate = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined;
  if (!candidate || typeof candidate !== 'object') return false;
  if (error instanceof DependencyUnavailable) return true;
  // Redis answered with an error (READONLY after a failover, OOM, MISCONF, NOAUTH...).
  if (candidate.name === 'ReplyError') return true;
  if (typeof candidate.code === 'string' && UNAVAILABLE_CODES.has(candidate.code)) return true;
  if (typeof candidate.message === 'string' && UNAVAILABLE_MESSAGES.test(candidate.message)) return true;
  return candidate.cause !== undefined && candidate.cause !== error && isUnavailable(candidate.cause);
}
