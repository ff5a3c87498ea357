/**
 * The store's routes outside its documents, handed to the engine as
 * `routes`: readiness and metrics. Code outside this folder imports them
 * from here (test/layout.test.ts checks it).
 *
 * @example const routes = { '/readyz': readinessRoute(checks, logger), '/metrics': metricsRoute(metrics, 'loopback') };
 */
export { metricsRoute } from './metrics-route';
export { READINESS_REUSE_MS, readinessRoute } from './readiness';
