/**
 * The public surface of the engine's `credentials` part: where each security
 * scheme's credential travels in a request, decided once for the server, the
 * typed client and the contract fuzzer. It imports nothing, so the client
 * can use it without the server. Code outside src/engine imports this part
 * from here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example const placement = placementOf(scheme); if (placement?.in === 'authorization') headers.set('Authorization', authorizationValue(placement.form, key));
 */
export { authorizationValue, placementOf } from './placement';
export type { CredentialPlacement, DeclaredScheme } from './placement';
