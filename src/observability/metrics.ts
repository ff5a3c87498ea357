import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import cluster from 'node:cluster';
import { clusterWorkerMetrics } from './cluster-metrics';
import { SeriesBatches } from './batched-series';
import type { PoolStats } from '../service/storage';

/** Seconds. The service answers in 1–50 ms; the tail buckets catch outages and slow queries. */
export const REQUEST_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Seconds. A query takes well under a millisecond on SQLite, a few on PostgreSQL. */
export const QUERY_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1];

/**
 * The service's Prometheus metrics, in a registry of their own: `createApp`
 * may run many times in one process (tests), and each app reports only its
 * own traffic. Every label value comes from the contract or a fixed set, so
 * the number of series is bounded whatever clients send.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Series of the metrics below observed on the request path, batched (batched-series.ts): read, every metric has them all. */
  readonly batched: SeriesBatches;
  /** `operation` (operationId or a fixed name), `method` (fixed set), `status`, `version` (`v1`, `v2`, `none`). */
  readonly requestDuration: Histogram<'operation' | 'method' | 'status' | 'version'>;
  readonly rateLimitRefusals: Counter<'plan' | 'window'>;
  readonly rateLimitBans: Counter<'plan' | 'window'>;
  readonly keyCacheLookups: Counter<'result'>;
  /** Calls of deprecated operations still served, by operation and plan: who still calls them before their sunset. */
  readonly deprecatedCalls: Counter<'operation' | 'plan' | 'version'>;
  /** `operation` is the repository method, e.g. `pets.list`; `backend` is `sqlite` or `postgres`. */
  readonly dbQueryDuration: Histogram<'operation' | 'backend'>;
  readonly redisErrors: Counter<'kind'>;
  /**
   * Sampled responses that break the contract (VALIDATE_RESPONSES as a
   * fraction): `operation` (operationId, or `unmatched` under a base path),
   * `kind` (`status`, `header`, `body`).
   */
  readonly contractViolations: Counter<'operation' | 'kind'>;
  /** Streams (sequential media types) that ended, by operation and how: `complete`, `client_closed`, `failed`, `invalid_item`, `shutdown`, `stalled`, `max_duration`. */
  readonly streams: Counter<'operation' | 'end'>;
  /** Items sent in streams, by operation. */
  readonly streamItems: Counter<'operation'>;
  /** Streams refused (429) because their caller, or this process, had its most streams open, by `scope` (`caller`, `process`). */
  readonly streamRefusals: Counter<'scope'>;
  /** Items of a stream that broke their item schema (checked in strict mode and in sampled requests), by operation. */
  readonly streamItemViolations: Counter<'operation'>;
  /** Reports a connection pool's size, idle and waiting counts at each scrape. */
  watchPool(backend: string, stats: () => PoolStats): void;
  /** Times each call of a repository of `backend`, by operation, in `dbQueryDuration` (batched). */
  queryTimer(backend: string): (operation: string) => (seconds: number) => void;
  /** Counts the key cache's hits and misses in `keyCacheLookups` (batched). */
  keyCacheObserver(): (result: 'hit' | 'miss') => void;
  /** Counts the rate limits' refusals and bans, by plan and window. */
  rateLimitObserver(): { refused(plan: string, window: string): void; banned(plan: string, window: string): void };
  /** The text exposition of this app's metrics and the process-wide ones. */
  render(): Promise<string>;
  readonly contentType: string;
}

let processRegistry: Registry | undefined;

/**
 * Process and Node metrics (CPU, RSS, heap, GC, event loop lag, handles) are
 * about the process, not an app: collected once per process, in a registry
 * shared by every app, so creating apps does not start more samplers.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * Creates the metrics of one app instance (`pas_` prefix).
 *
 * @example
 * const metrics = createMetrics();
 * metrics.keyCacheLookups.inc({ result: 'hit' });
 * const text = await metrics.render();
 */
export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const batched = new SeriesBatches();
  // Every metric's batched series are handed over before it is read.
  const collect = function (this: object): void {
    batched.flush(this);
  };
  const processWide = processMetrics();
  const pools = new Map<string, () => PoolStats>();
  const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number): Gauge<'backend'> =>
    new Gauge({
      name,
      help,
      labelNames: ['backend'],
      registers,
      collect() {
        for (const [backend, stats] of pools) this.set({ backend }, read(stats()));
      },
    });
  poolGauge('pas_db_pool_connections', 'Connections open in the database pool.', (stats) => stats.total);
  poolGauge('pas_db_pool_idle_connections', 'Open database connections not in use.', (stats) => stats.idle);
  poolGauge('pas_db_pool_waiting_requests', 'Queries waiting for a database connection.', (stats) => stats.waiting);

  const metrics: Metrics = {
    registry,
    batched,
    requestDuration: new Histogram({
      name: 'pas_http_request_duration_seconds',
      help: 'Time from the request reaching the app to the response being handed to the socket.',
      labelNames: ['operation', 'method', 'status', 'version'],
      buckets: REQUEST_DURATION_BUCKETS,
      registers,
      collect,
    }),
    rateLimitRefusals: new Counter({
      name: 'pas_rate_limit_refusals_total',
      help: 'Requests refused with 429, by plan and by the window that refused them (ban: the key was banned).',
      labelNames: ['plan', 'window'],
      registers,
      collect,
    }),
    rateLimitBans: new Counter({
      name: 'pas_rate_limit_bans_total',
      help: 'Keys banned for sending past their limit, by plan and exhausted window.',
      labelNames: ['plan', 'window'],
      registers,
      collect,
    }),
    keyCacheLookups: new Counter({
      name: 'pas_key_cache_lookups_total',
      help: 'API key lookups answered from the in-process cache (hit) or the database (miss).',
      labelNames: ['result'],
      registers,
      collect,
    }),
    deprecatedCalls: new Counter({
      name: 'pas_deprecated_calls_total',
      help: 'Calls of deprecated operations (served, before their sunset), by operation, version and the plan of the calling key.',
      labelNames: ['operation', 'plan', 'version'],
      registers,
      collect,
    }),
    dbQueryDuration: new Histogram({
      name: 'pas_db_query_duration_seconds',
      help: 'Duration of repository calls (one query each, waiting for a pooled connection included).',
      labelNames: ['operation', 'backend'],
      buckets: QUERY_DURATION_BUCKETS,
      registers,
      collect,
    }),
    redisErrors: new Counter({
      name: 'pas_redis_errors_total',
      help: 'Redis failures: connection errors and failed commands.',
      labelNames: ['kind'],
      registers,
      collect,
    }),
    streams: new Counter({
      name: 'pas_streams_total',
      help: 'Streamed answers (SSE, JSON Lines, JSON text sequences) that ended, by operation and how they ended.',
      labelNames: ['operation', 'end'],
      registers,
      collect,
    }),
    streamItems: new Counter({
      name: 'pas_stream_items_total',
      help: 'Items sent in streamed answers, by operation.',
      labelNames: ['operation'],
      registers,
      collect,
    }),
    streamRefusals: new Counter({
      name: 'pas_stream_refusals_total',
      help: 'Streams refused (429) because their caller, or this process, had its most streams open, by scope (caller, process).',
      labelNames: ['scope'],
      registers,
      collect,
    }),
    streamItemViolations: new Counter({
      name: 'pas_stream_item_violations_total',
      help: 'Items of streamed answers that break their item schema (strict mode, and sampled requests), by operation.',
      labelNames: ['operation'],
      registers,
      collect,
    }),
    contractViolations: new Counter({
      name: 'pas_contract_violations_total',
      help: 'Sampled responses that break the contract, checked after they were sent, by operation and kind (status, header, body).',
      labelNames: ['operation', 'kind'],
      registers,
      collect,
    }),
    watchPool(backend, stats) {
      pools.set(backend, stats);
    },
    queryTimer(backend) {
      return (operation) => {
        const series = batched.histogramSeries(this.dbQueryDuration, { operation, backend });
        return (seconds) => series.observe(seconds);
      };
    },
    rateLimitObserver() {
      return {
        refused: (plan, window) => this.rateLimitRefusals.inc({ plan, window }),
        banned: (plan, window) => this.rateLimitBans.inc({ plan, window }),
      };
    },
    keyCacheObserver() {
      const series = {
        hit: batched.counterSeries(this.keyCacheLookups, { result: 'hit' }),
        miss: batched.counterSeries(this.keyCacheLookups, { result: 'miss' }),
      };
      return (result) => series[result].inc();
    },
    // A worker of WORKERS=N reports the whole instance, gathered by the primary.
    render: cluster.isWorker
      ? clusterWorkerMetrics([registry, processWide])
      : async () => {
          const [own, shared] = await Promise.all([registry.metrics(), processWide.metrics()]);
          return own + shared;
        },
    contentType: registry.contentType,
  };
  // Known series start at 0, so rate() sees their first increment.
  for (const result of ['hit', 'miss']) metrics.keyCacheLookups.inc({ result }, 0);
  for (const kind of ['connection', 'command']) metrics.redisErrors.inc({ kind }, 0);
  return metrics;
}
