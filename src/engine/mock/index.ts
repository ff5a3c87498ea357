/**
 * The public surface of the engine's `mock` part. Mock answers from the
 * contract's examples (npm run mock). Code outside src/engine imports this
 * part from here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example const mocks = buildOperationMocks(contract, stubbedOperations(handlers));
 */
export { buildOperationMocks } from './mock-responses';
