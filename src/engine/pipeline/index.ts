/**
 * The public surface of the engine's `pipeline` part. The request phases and
 * their assembly into one compiled pipeline per operation, the error mapper,
 * and what the start refuses. Code outside src/engine imports this part from
 * here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example app.use(assemblePipeline(apis, phases)); app.use(unknownRoute); app.use(errorMapper(logger));
 */
export { errorMapper, unknownRoute } from './error-response';
export { loggedPath } from './logged-path';
export { assemblePipeline, routeOf } from './operation-pipeline';
export type { PhaseImplementations } from './phases';
export { contractRefusals } from './refusals';
export { handleStage, serializeStage } from './respond';
export type { StreamSettings } from './respond';
export { precomputeHeaders } from './security-headers';
export { streamAdmission } from './stream-admission';
export { sunsetStage } from './sunset';
