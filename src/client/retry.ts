import type { Middleware } from 'openapi-fetch';

export interface RetryOptions {
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** First backoff step when the server sends no Retry-After. Default 500 ms. */
  baseDelayMs?: number;
  /** No single wait is longer: a later Retry-After is returned to the caller instead. Default 60 s. */
  maxDelayMs?: number;
  /** Retry POST / PATCH without an Idempotency-Key too (only when the operation is safe to repeat). Default false. */
  retryNonIdempotent?: boolean;
  /** Injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'QUERY']);
/** Answers worth retrying: the rate limit (429) and a backing service that is down (503), both with Retry-After. */
const TRANSIENT = new Set([429, 503]);

/** Retry-After as milliseconds: delta-seconds or an HTTP-date (RFC 9110). */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * openapi-fetch middleware implementing the seed's client rule, extended to
 * every transient failure: on 429 or 503, back off until Retry-After, or with
 * capped exponential backoff and full jitter when there is none; on a network
 * error, the same backoff. It gives up on `key_temporarily_banned`, after
 * `maxRetries`, or when asked to wait longer than `maxDelayMs`. A request is
 * retried when repeating it is safe: an idempotent method, or one carrying an
 * `Idempotency-Key` (the server stores it once), or any when
 * `retryNonIdempotent`.
 *
 * @example client.use(retryTransient({ maxRetries: 5 }));
 */
export function retryTransient(options: RetryOptions = {}): Middleware {
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
  const backoff = (attempt: number): number => random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);

  /** Sends `original` again until it gets an answer that is not transient, or the retries run out. */
  async function retry(original: Request, fetch: typeof globalThis.fetch, first: Response | Error): Promise<Response | Error> {
    let current = first;
    for (let attempt = 0; attempt < maxRetries; attempt++) {
      let delay: number;
      if (current instanceof Response) {
        if (!TRANSIENT.has(current.status)) break;
        const body = (await current
          .clone()
          .json()
          .catch(() => undefined)) as { code?: string } | undefined;
        if (body?.code === 'key_temporarily_banned') break;
        delay = retryAfterMs(current.headers.get('Retry-After')) ?? backoff(attempt);
        if (delay > maxDelayMs) break;
        await current.body?.cancel();
      } else {
        delay = backoff(attempt);
      }
      await sleep(delay);
      current = await fetch(original.clone()).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    }
    return current;
  }

  return {
    onRequest({ request, id }) {
      if (retryNonIdempotent || IDEMPOTENT.has(request.method) || request.headers.has('Idempotency-Key')) copies.set(id, request.clone());
      return undefined;
    },
    async onResponse({ response, options: { fetch }, id }) {
      const original = copies.get(id);
      copies.delete(id);
      if (!original || !TRANSIENT.has(response.status)) return undefined;
      const result = await retry(original, fetch, response);
      if (result instanceof Error) throw result;
      return result;
    },
    async onError({ error, options: { fetch }, id }) {
      const original = copies.get(id);
      copies.delete(id);
      if (!original) return undefined;
      return retry(original, fetch, error instanceof Error ? error : new Error(String(error)));
    },
  };
}

/** The former name, when only 429 was retried. @deprecated Use retryTransient. */
export const retryOn429 = retryTransient;

/**
 * openapi-fetch middleware that gives every POST a fresh `Idempotency-Key`
 * (a random UUID) unless the caller set one, so that a create retried after a
 * timeout, a 429 or a 503 is stored once (the server replays the first
 * response). The same key travels with every retry of that request.
 *
 * @example client.use(idempotencyKeys());
 */
export function idempotencyKeys(newKey: () => string = () => crypto.randomUUID()): Middleware {
  return {
    onRequest({ request }) {
      if (request.method !== 'POST' || request.headers.has('Idempotency-Key')) return undefined;
      request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
}
