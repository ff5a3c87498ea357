import type { JWTPayload } from 'jose';
import { DependencyUnavailable } from '../errors/unavailable';

type Jose = typeof import('jose');

/** Where access tokens are checked: the issuer's keys, and what the token must say. */
export interface TokenSettings {
  /** The JSON Web Key Set of the issuer (`OAUTH2_JWKS_URL`). */
  jwksUrl: string;
  /** The `iss` every token must carry (`OAUTH2_ISSUER`); unset only where the configuration says so explicitly (tests). */
  issuer?: string | undefined;
  /** An `aud` every token must carry (`OAUTH2_AUDIENCE`); unset only where the configuration says so explicitly (tests). */
  audience?: string | undefined;
  /** The oldest token accepted, by its `iat` (`OAUTH2_MAX_TOKEN_AGE_SECONDS`). */
  maxTokenAgeSeconds?: number | undefined;
  /** The `typ` header every token must carry (`OAUTH2_TOKEN_TYPE`: `at+jwt` per RFC 9068); not checked when unset. */
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
 * const verify = tokenVerifier({ jwksUrl: 'https://issuer.example/.well-known/jwks.json', issuer: 'https://issuer.example/', audience: 'pets-api' });
 * const { subject, scopes } = await verify(token);
 */
export function tokenVerifier(settings: TokenSettings): (token: string) => Promise<VerifiedToken> {
  // jose is loaded with the first token: a server whose documents declare no token scheme never holds it in memory.
  let loading: Promise<{ jose: Jose; keys: ReturnType<Jose['createRemoteJWKSet']> }> | undefined;
  const load = () =>
    (loading ??= import('jose').then((jose) => ({
      jose,
      // An unknown kid refetches the set (a rotation), at most once a second however many such tokens arrive.
      keys: jose.createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: 2_000, cooldownDuration: 1_000 }),
    })));
  return async (token) => {
    const { jose, keys } = await load();
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, keys, {
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: REQUIRED_CLAIMS,
        ...(settings.issuer !== undefined && { issuer: settings.issuer }),
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
