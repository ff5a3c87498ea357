import type { JWTPayload } from 'jose';
import { DependencyUnavailable } from '../errors/unavailable';

type Jose = typeof import('jose');

/** Where access tokens are checked: the issuer's keys, and what the token must say. */
export interface TokenSettings {
  /**
   * Where the issuer's keys are: its JSON Web Key Set (a URL), or
   * its authorization server metadata (RFC 8414: a 3.2 document's
   * `oauth2MetadataUrl`), whose `jwks_uri` names the set and whose `issuer`
   * is the `iss` required when none is configured.
   */
  keys: { jwksUrl: string } | { metadataUrl: string };
  /** The `iss` every token must carry; unset only where the engine's options say so explicitly (`acceptAnyIssuerAndAudience`, tests). */
  issuer?: string | undefined;
  /** An `aud` every token must carry; unset only where the engine's options say so explicitly (`acceptAnyIssuerAndAudience`, tests). */
  audience?: string | undefined;
  /** The oldest token accepted, by its `iat`. */
  maxTokenAgeSeconds?: number | undefined;
  /** The `typ` header every token must carry (`at+jwt` per RFC 9068); not checked when unset. */
  tokenType?: string | undefined;
}

/** A token whose signature and claims were verified. */
export interface VerifiedToken {
  /** `sub`: who the token speaks for. */
  readonly subject: string;
  /** The granted scopes: the `scope` claim (space-separated) and the `scp` claim (an array, or space-separated). */
  readonly scopes: ReadonlySet<string>;
  readonly claims: JWTPayload;
}

/** A token that does not verify: the reason is safe to send (RFC 6750 `error_description`). */
export class TokenRejected extends Error {
  override readonly name = 'TokenRejected';
}

/** A token that could not be checked because the key set did not answer: a 503, not a 401. */
export class TokenKeysUnavailable extends DependencyUnavailable {
  override readonly name = 'TokenKeysUnavailable';
}

/** Every token must say when it expires and whom it speaks for: a token without `exp` would work forever once stolen. */
const REQUIRED_CLAIMS = ['exp', 'sub'];
/** Clock difference tolerated on `exp`, `nbf` and `iat`. */
const CLOCK_SKEW_SECONDS = 30;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * Verifies bearer JWTs (OAuth 2.0 and OpenID Connect access tokens) with
 * `jose`: the signature against the issuer's JWKS (fetched once, cached,
 * fetched again when a token names a key it does not hold); `exp` and `sub`
 * required; `exp`, `nbf` and the age by `iat` with a small clock skew; `iss`,
 * `aud` and `typ` as configured.
 *
 * @example
 * const verify = tokenVerifier({ keys: { jwksUrl: 'https://issuer.example/.well-known/jwks.json' }, issuer: 'https://issuer.example/', audience: 'pets-api' });
 * const { subject, scopes } = await verify(token);
 */
export function tokenVerifier(settings: TokenSettings): (token: string) => Promise<VerifiedToken> {
  // jose is loaded with the first token: a server whose documents declare no token scheme never holds it in memory.
  let loading: Promise<{ jose: Jose; keys: ReturnType<Jose['createRemoteJWKSet']>; issuer: string | undefined }> | undefined;
  const load = () =>
    (loading ??= (async () => {
      // require, not import(): the compiled package's native import() fails under test runners that load CommonJS (jest).
      const jose = require('jose') as Jose;
      const found = 'jwksUrl' in settings.keys ? { jwksUrl: settings.keys.jwksUrl, issuer: undefined } : await discover(settings.keys.metadataUrl);
      // An unknown kid refetches the set (a rotation), at most once a second however many such tokens arrive.
      const keys = jose.createRemoteJWKSet(new URL(found.jwksUrl), { timeoutDuration: 2_000, cooldownDuration: 1_000 });
      return { jose, keys, issuer: settings.issuer ?? found.issuer };
    })().catch((error: unknown) => {
      // Metadata that could not be read is read again for the next token.
      loading = undefined;
      throw error;
    }));
  return async (token) => {
    const { jose, keys, issuer } = await load();
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, keys, {
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: REQUIRED_CLAIMS,
        ...(issuer !== undefined && { issuer }),
        ...(settings.audience !== undefined && { audience: settings.audience }),
        ...(settings.maxTokenAgeSeconds !== undefined && { maxTokenAge: settings.maxTokenAgeSeconds }),
        ...(settings.tokenType !== undefined && { typ: settings.tokenType }),
      }));
    } catch (error) {
      throw rejection(jose.errors, error);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenRejected('the token has no subject (sub)');
    return { subject: payload.sub, scopes: scopesOf(payload), claims: payload };
  };
}

/**
 * The key set and issuer an authorization server publishes in its metadata
 * (RFC 8414): fetched once per process (and again after a failure), within
 * the same 2 s the key set is given.
 */
async function discover(metadataUrl: string): Promise<{ jwksUrl: string; issuer: string | undefined }> {
  let metadata: { jwks_uri?: unknown; issuer?: unknown };
  try {
    const response = await fetch(metadataUrl, { signal: AbortSignal.timeout(2_000), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`it answered ${response.status}`);
    metadata = (await response.json()) as typeof metadata;
  } catch (error) {
    throw new TokenKeysUnavailable(`the authorization server metadata (${metadataUrl}) could not be read: ${(error as Error).message}`);
  }
  if (typeof metadata.jwks_uri !== 'string' || !/^https?:\/\//.test(metadata.jwks_uri)) {
    throw new TokenKeysUnavailable(`the authorization server metadata (${metadataUrl}) names no jwks_uri`);
  }
  return { jwksUrl: metadata.jwks_uri, issuer: typeof metadata.issuer === 'string' ? metadata.issuer : undefined };
}

function rejection(errors: Jose['errors'], error: unknown): Error {
  if (error instanceof errors.JWTExpired) return new TokenRejected(error.claim === 'iat' ? 'the token was issued too long ago' : 'the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return new TokenRejected(`the token has no ${error.claim} claim`);
    // RFC 9068: an access token says so in its typ header; an ID token, or any other JWT, does not.
    if (error.claim === 'typ') return new TokenRejected('the token is not an access token of the accepted type (typ header)');
    return new TokenRejected(`the token's ${error.claim} claim is not accepted`);
  }
  if (error instanceof errors.JWKSNoMatchingKey) return new TokenRejected('the token is signed with a key the issuer does not publish');
  if (error instanceof errors.JWSSignatureVerificationFailed) return new TokenRejected('the token signature does not verify');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError)) {
    return new TokenKeysUnavailable(`the key set at OAUTH2_JWKS_URL could not be read: ${(error as Error).message}`);
  }
  return new TokenRejected('the token is not a valid signed JWT');
}

function scopesOf(payload: JWTPayload): Set<string> {
  const scopes = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') for (const scope of value.split(' ')) if (scope !== '') scopes.add(scope);
    if (Array.isArray(value)) for (const scope of value) if (typeof scope === 'string') scopes.add(scope);
  };
  add(payload['scope']);
  add(payload['scp']);
  return scopes;
}
