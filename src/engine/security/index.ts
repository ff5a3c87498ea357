/**
 * The public surface of the engine's `security` part. Authentication: security
 * schemes and requirements, credentials, and access tokens. Code outside
 * src/engine imports this part from here, never from one of its files
 * (test/layout.test.ts checks it).
 *
 * @example const stage = authenticate({ ...resolvedSecurity(spec, op), check, verifyToken: undefined, realm: 'pet-adoption' });
 */
export { authenticate, requireCaller } from './authenticate';
export type { CredentialCheck, Principal } from './authenticate';
export { bearerToken } from './bearer';
export { authenticationOf, effectiveSecurity, resolvedSecurity } from './requirements';
export { servedSchemes } from './schemes';
export { tokenVerifier } from './tokens';
