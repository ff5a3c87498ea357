/**
 * The public surface of the engine's `publish` part. The published contract
 * and the /docs page. Code outside src/engine imports this part from here,
 * never from one of its files (test/layout.test.ts checks it).
 *
 * @example mountDocs(app, apis);
 */
export { mountDocs } from './docs';
