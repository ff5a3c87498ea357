/**
 * The public surface of the engine's `stage` part. A stage of the pipeline,
 * and running stages in order. Code outside src/engine imports this part from
 * here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example app.use(asMiddleware(assignRequestId));
 */
export { asMiddleware } from './stage';
export type { Stage } from './stage';
