import type { Middleware } from 'openapi-fetch';

export interface RetryOptions {
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** First backoff step when the server sends no Retry-After. Default 500 ms. */
  baseDelayMs?: number;
  /** No single wait is longer: a later Retry-After is returned to the caller instead. Default 60 s. */
  maxDelayMs?: number;
  /** Retry POST / PATCH too (only when the operation is safe to repeat). Default false. */
  retryNonIdempotent?: boolean;
  /** Injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Retry-After as milliseconds: delta-seconds or an HTTP-date (RFC 9110). */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * openapi-fetch middleware implementing the seed's client rule: on 429, back
 * off until Retry-After, or with capped exponential backoff and full jitter
 * when there is none; give up on `key_temporarily_banned`, after
 * `maxRetries`, or when asked to wait longer than `maxDelayMs`. Non-idempotent
 * requests (POST, PATCH) are not retried unless `retryNonIdempotent`.
 *
 * @example client.use(retryOn429({ maxRetries: 5 }));
 */
export function retryOn429(options: RetryOptions = {}): Middleware {
  const {
    maxRetries = 3,
    baseDelayMs = 500,
    maxDelayMs = 60_000,
    retryNonIdempotent = false,
    sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    random = Math.random,
  } = options;
  // Request bodies are streams: keep a copy of each retryable request until its response arrives.
  const copies = new Map<string, Request>();

  return {
    onRequest({ request, id }) {
      if (retryNonIdempotent || IDEMPOTENT.has(request.method)) copies.set(id, request.clone());
      return undefined;
    },
    async onResponse({ response, options: { fetch }, id }) {
      const original = copies.get(id);
      copies.delete(id);
      if (!original || response.status !== 429) return undefined;
      let current = response;
      for (let attempt = 0; current.status === 429 && attempt < maxRetries; attempt++) {
        const body = (await current.clone().json().catch(() => undefined)) as { code?: string } | undefined;
        if (body?.code === 'key_temporarily_banned') break;
        const delay = retryAfterMs(current.headers.get('Retry-After')) ?? random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
        if (delay > maxDelayMs) break;
        await current.body?.cancel();
        await sleep(delay);
        current = await fetch(original.clone());
      }
      return current;
    },
    onError({ id }) {
      copies.delete(id);
      return undefined;
    },
  };
}
