/**
 * The store's observability: the logger, the metrics, the access log, and
 * what the engine reports as requests run. Code outside this folder imports
 * it from here (test/layout.test.ts checks it).
 *
 * @example const logger = createLogger('info'); const metrics = createMetrics();
 */
export { serveClusterMetrics } from './cluster-metrics';
export { SeriesBatches } from './batched-series';
export { engineHooks, startViolationSeries } from './engine-hooks';
export { bufferedDestination, createLogger, flushLogger } from './logger';
export { createMetrics, type Metrics } from './metrics';
export { requestObserver } from './request-observer';
