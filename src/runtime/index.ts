/**
 * What the store needs of Node itself: the version check, the HTTP server and
 * its limits, serving and stopping, the cluster of workers. Code outside this
 * folder imports it from here (test/layout.test.ts checks it).
 *
 * @example const serving = await serve(service); process.on('SIGTERM', () => void serving.stop());
 */
export { minimumVersion, unsupportedRuntime } from './check-runtime';
export { runPrimary } from './cluster';
export { createHttpServer, MAX_HEADER_BYTES } from './http-server';
export { settleUrlParseDeprecation } from './legacy-url-parse';
export { serve, type Serving } from './serve';
