/** A security scheme as a document declares it: the fields that say where its credential goes. */
export interface DeclaredScheme {
  readonly type?: string;
  readonly scheme?: string;
  readonly in?: string;
  readonly name?: string;
}

/**
 * Where a scheme's credential travels in a request, and what it is: the one
 * place this is decided, for the server that reads credentials
 * (src/security/schemes.ts), the typed client that sends them and the
 * contract fuzzer.
 *
 * - `authorization`: the Authorization header, `Bearer <credential>` or
 *   `Basic base64(<key>:)` (the key as the user name);
 * - `header`, `query`, `cookie`: the named header, query parameter or
 *   cookie, holding the key as it is.
 *
 * `holds` says what the credential is: an API key, or an access token
 * (oauth2, openIdConnect).
 */
export type CredentialPlacement =
  | { readonly in: 'authorization'; readonly form: 'bearer' | 'basic'; readonly holds: 'key' | 'token' }
  | { readonly in: 'header' | 'query' | 'cookie'; readonly name: string; readonly holds: 'key' };

/**
 * The placement of a scheme's credential; undefined for a scheme the engine
 * does not serve (`http` digest, `mutualTLS`, an `apiKey` without a name).
 *
 * @example placementOf({ type: 'apiKey', in: 'header', name: 'X-API-Key' }) // { in: 'header', name: 'X-API-Key', holds: 'key' }
 */
export function placementOf(scheme: DeclaredScheme): CredentialPlacement | undefined {
  if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') return { in: 'authorization', form: 'bearer', holds: 'token' };
  if (scheme.type === 'http') {
    const form = scheme.scheme?.toLowerCase();
    return form === 'bearer' || form === 'basic' ? { in: 'authorization', form, holds: 'key' } : undefined;
  }
  if (scheme.type === 'apiKey' && (scheme.in === 'header' || scheme.in === 'query' || scheme.in === 'cookie') && scheme.name) {
    return { in: scheme.in, name: scheme.name, holds: 'key' };
  }
  return undefined;
}

/**
 * The Authorization header's value for a credential placed there.
 *
 * @example authorizationValue('basic', 'pas_abc') // 'Basic cGFzX2FiYzo='
 */
export function authorizationValue(form: 'bearer' | 'basic', credential: string): string {
  return form === 'basic' ? `Basic ${btoa(`${credential}:`)}` : `Bearer ${credential}`;
}
