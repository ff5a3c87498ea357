// The part of autocannon's API the harness uses (autocannon ships no types and
// the brief allows only autocannon itself as a new devDependency).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds before a request counts as a timeout. */
      timeout?: number;
      pipelining?: number;
      /** The requests each connection sends in turn; `setupRequest` may rewrite each one as it is built (a new body per request). */
      requests?: RequestOptions[];
    }
    interface RequestOptions {
      method?: Options['method'];
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: RequestOptions, context: Record<string, unknown>) => RequestOptions | null;
    }
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      /** For `requests`: every response completed over the run. */
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
    }
    interface Instance extends EventEmitter {
      stop(): void;
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance;
  export = autocannon;
}
