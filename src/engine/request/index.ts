/**
 * The public surface of the engine's `request` part. Reading a request:
 * parameters by style, bodies by media type, the URL length limit, and the
 * validator. Code outside src/engine imports this part from here, never from
 * one of its files (test/layout.test.ts checks it).
 *
 * @example const stages = [parametersStage(spec, op, validator), bodyStage(spec, op)];
 */
export { bodyStage } from './body';
export { parametersStage } from './parameters';
export { limitUrlLength } from './url-length';
export { requestValidator } from './validator';
