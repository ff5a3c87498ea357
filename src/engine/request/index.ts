/**
 * The public surface of the engine's `request` part. Reading a request:
 * parameters by style, bodies by media type, the URL length limit, and the
 * validator. Code outside src/engine imports this part from here, never from
 * one of its files (test/layout.test.ts checks it).
 *
 * @example const validation = requestValidation(spec, '/v1', { validateResponses: false });
 * const stages = [parametersStage(spec, op, { validator, check: validation.parameters(op) }), bodyStage(spec, op, { schemas, maxStreamBytes, maxStreamItems }), validation.body(op)];
 */
export { bodyStage } from './body';
export { readItems, type ItemReading } from './items';
export { parametersStage } from './parameters';
export { limitUrlLength } from './url-length';
export { requestValidation } from './validator';
export type { RequestValidation } from './validator';
