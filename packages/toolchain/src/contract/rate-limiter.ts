/**
 * Spaces request starts at least 1/rate seconds apart, so the fuzzer never
 * sends more than `rate` requests in any second (requests are sequential).
 */
export class RateLimiter {
  private nextStart = 0;

  constructor(private readonly perSecond: number) {
    if (!(perSecond > 0)) throw new Error('rate must be positive');
  }

  /**
   * Resolves when the next request may start.
   *
   * @example const limiter = new RateLimiter(20); await limiter.acquire(); await fetch(url);
   */
  async acquire(): Promise<void> {
    const now = Date.now();
    const wait = this.nextStart - now;
    this.nextStart = Math.max(now, this.nextStart) + 1000 / this.perSecond;
    if (wait > 0) await sleep(wait);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
