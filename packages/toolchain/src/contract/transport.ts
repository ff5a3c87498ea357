/**
 * Sends requests within the run's limits: at most `rate` per second, each
 * with a timeout, and on 429 waits for `Retry-After` and sends again (not a
 * failure). A ban (`key_temporarily_banned`) or a wait longer than the time
 * left stops the run: the key's plan is too small for it.
 */
import { RateLimiter, sleep } from './rate-limiter';
import type { HttpRequest } from './request';

export interface HttpResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  text: string;
  /** How long the request took, in milliseconds. */
  durationMs: number;
}

export class RunStopped extends Error {}

export interface TransportOptions {
  rate: number;
  /** Epoch milliseconds after which nothing more is sent. */
  deadline: number;
  requestTimeoutMs: number;
  /** Called for every 429 before waiting (so it can be checked against the contract and reported). */
  onRateLimited?: (response: HttpResponse, waitSeconds: number) => void;
  /** What a stop for rate limits advises. */
  hint: string;
}

/** What a run stopped by rate limits advises: the project's command for a key with larger limits, when it has one. */
export const rateLimitHint = (largerKey: string | undefined): string =>
  largerKey === undefined
    ? 'use a key with larger limits, a lower --rate or a longer --time-limit'
    : `use a key with larger limits, e.g. \`${largerKey}\`, or a longer --time-limit`;

export class Transport {
  private readonly limiter: RateLimiter;
  /** Requests sent, 429s included. */
  sent = 0;
  rateLimitedWaits = 0;

  constructor(private readonly options: TransportOptions) {
    this.limiter = new RateLimiter(options.rate);
  }

  /**
   * Sends the request; resolves with its response, or with `{ error }` when no
   * response came (timeout, connection refused: the message says which).
   * `onRateLimited` sees each 429 (so it can be checked against the contract).
   *
   * @example const response = await transport.send({ method: 'GET', url, headers: {} });
   */
  async send(request: HttpRequest, onRateLimited?: (response: HttpResponse) => void): Promise<HttpResponse | { error: string }> {
    for (let attempt = 0; ; attempt++) {
      if (Date.now() >= this.options.deadline) throw new RunStopped('time limit reached');
      await this.limiter.acquire();
      const started = Date.now();
      this.sent++;
      let response: HttpResponse;
      try {
        const answer = await fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.options.requestTimeoutMs),
        });
        const headers: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          headers[name] = value;
        });
        response = { status: answer.status, headers, text: await answer.text(), durationMs: Date.now() - started };
      } catch (error) {
        // fetch wraps the socket error: the code is on its cause (or the cause's first error).
        const inner = (error as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
        const cause = inner?.code ?? inner?.errors?.[0]?.code ?? inner?.message;
        return {
          error:
            (error as Error).name === 'TimeoutError'
              ? `no response within ${this.options.requestTimeoutMs} ms`
              : `request failed: ${cause ?? (error as Error).message}`,
        };
      }
      if (response.status !== 429) return response;

      const retryAfter = Number(response.headers['retry-after']);
      const waitSeconds = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 2 ** Math.min(attempt, 5);
      onRateLimited?.(response);
      this.options.onRateLimited?.(response, waitSeconds);
      if (/key_temporarily_banned/.test(response.text))
        throw new RunStopped(`the key is temporarily banned (429 key_temporarily_banned): ${this.options.hint}`);
      if (attempt >= 5) throw new RunStopped(`still rate limited after 5 waits: ${this.options.hint}`);
      if (Date.now() + waitSeconds * 1000 > this.options.deadline) {
        throw new RunStopped(`rate limited (429) with Retry-After ${waitSeconds} s, beyond the time limit: ${this.options.hint}`);
      }
      this.rateLimitedWaits++;
      // At least a second, so a Retry-After of 0 at the window's edge does not spin.
      await sleep(Math.max(waitSeconds, 1) * 1000);
    }
  }
}
