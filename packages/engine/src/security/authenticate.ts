import type { Request } from 'express';
import type { SecurityRequirement } from '../contract/document';
import { ApiError } from '../errors/api-error';
import { toApiError } from '../errors/to-api-error';
import { isUnavailable } from '../errors/unavailable';
import type { Stage } from '../stage/stage';
import type { Authentication } from './requirements';
import { challengeOf, credentialNoun, credentialOf, howToSend, type Credential, type SecurityScheme } from './schemes';
import { TokenKeysUnavailable, TokenRejected, type VerifiedToken } from './tokens';
import { contextOf, type Principal } from '../context/request-context';

export type { Principal };

/**
 * What the user plugs in: the caller of a key (API keys are the user's),
 * and the caller of a verified token.
 *
 * @example const check: CredentialCheck<Member> = { key: (key) => members.byKey(key), token: (token) => ({ principal: `token:${token.subject}`, plan: 'free' }) };
 */
export interface CredentialCheck<Caller extends Principal = Principal> {
  /**
   * The caller `key` identifies, presented through `scheme` (apiKey, http
   * bearer, http basic); synchronous when known at once (a cache). Throws an
   * ApiError (401, or 429 for a client refused before any lookup) whose
   * message says why the key is refused; any other error is a failure to
   * check (a database down: 503). `req` tells who is asking (its address).
   */
  key(key: string, scheme: SecurityScheme, req: Request): Caller | Promise<Caller>;
  /** The caller a verified access token speaks for (oauth2, openIdConnect). */
  token(token: VerifiedToken, scheme: SecurityScheme): Caller;
}

export interface AuthenticationOptions {
  /** The operation's requirements (OR of ANDs), each scheme resolved. */
  requirements: ReadonlyArray<ReadonlyArray<{ scheme: SecurityScheme; scopes: readonly string[] }>>;
  mode: Authentication;
  /** Schemes of requirements the engine cannot check (reported when nothing else can pass). */
  unsupported?: readonly string[];
  check: CredentialCheck;
  /** Verifies access tokens; undefined when no key set is configured (oauth2 and openIdConnect requirements then fail with a 401 saying so). */
  verifyToken: ((token: string) => Promise<VerifiedToken>) | undefined;
  /** The realm of every challenge. */
  realm: string;
}

/** How one scheme of a requirement fared. */
type SchemeResult =
  | { ok: true; principal: Principal }
  | { ok: false; why: 'missing' }
  | { ok: false; why: 'invalid'; error: ApiError; tokenError?: string }
  | { ok: false; why: 'scope'; principal: Principal; missing: readonly string[]; required: readonly string[] };

/**
 * The authenticate phase of one operation, by its security requirements: a
 * list is OR, the schemes of one requirement are AND, each scheme's
 * credential taken from where the document says. The caller is
 * the context's `caller`; a refusal is recorded as its `authFailure` and answered
 * by `requireCaller` after the rate limits counted the request:
 *
 * - no credential, or a wrong one: 401 with a `WWW-Authenticate` challenge
 *   for every scheme the operation accepts;
 * - a valid token without a required scope: 403 `insufficient_scope`
 *   (RFC 6750), the caller known (its limits apply);
 * - a key or token that could not be checked (a database or the key set
 *   down): 503.
 *
 * With `mode: 'optional'` (an empty requirement beside others) a request
 * presenting nothing is anonymous; one presenting a wrong credential is
 * still a 401. With `mode: 'none'` credentials are not examined.
 *
 * Synchronous when every check is (a cached key): no promise on that path.
 *
 * @example stages.push(authenticate({ requirements, mode: 'required', check, verifyToken: undefined, realm: 'pet-adoption' }));
 */
export function authenticate(options: AuthenticationOptions): Stage {
  const { requirements, mode } = options;
  if (mode === 'none') return () => undefined;
  if (requirements.length === 0) {
    // Every requirement names a scheme the engine cannot check: nothing can pass.
    const names = (options.unsupported ?? []).join(', ');
    const refusal = new ApiError(401, 'unauthorized', `this operation accepts only security schemes this server cannot check (${names})`, {
      'WWW-Authenticate': `Bearer realm="${options.realm}"`,
    });
    if (mode === 'optional') return () => undefined;
    return (req) => {
      contextOf(req).authFailure = refusal;
    };
  }
  const schemes = [...new Map(requirements.flat().map(({ scheme }) => [scheme.name, scheme])).values()];
  const challenges = (tokenError?: string): string[] => [...new Set(schemes.map((scheme) => challengeOf(scheme, options.realm, tokenError)))];
  const missing = (): ApiError => {
    const ways = requirements.map((requirement) => requirement.map(({ scheme }) => howToSend(scheme)).join(' and '));
    const message =
      requirements.length === 1 && requirements[0]!.length === 1
        ? `missing ${credentialNoun(requirements[0]![0]!.scheme)}: send ${ways[0]}`
        : `missing credentials: send ${ways.length === 1 ? ways[0] : `one of: ${ways.join('; ')}`}`;
    return new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': challenges().join(', ') });
  };

  /** The verdict once every requirement has a result. */
  const decide = (req: Request, results: SchemeResult[][]): void => {
    const context = contextOf(req);
    const passed = results.find((result) => result.every((scheme) => scheme.ok));
    if (passed) {
      const principals = passed.map((scheme) => (scheme as { principal: Principal }).principal);
      if (principals.every((principal) => principal.principal === principals[0]!.principal)) context.caller = principals[0]!;
      else
        context.authFailure = new ApiError(401, 'unauthorized', 'the credentials of this request identify different callers', {
          'WWW-Authenticate': challenges().join(', '),
        });
      return;
    }
    const scoped = results.find((result) => result.every((scheme) => scheme.ok || scheme.why === 'scope'));
    if (scoped) {
      const short = scoped.filter((scheme): scheme is Extract<SchemeResult, { why: 'scope' }> => !scheme.ok && scheme.why === 'scope');
      const scopes = [...new Set(short.flatMap((scheme) => scheme.missing))];
      // RFC 6750: the challenge's scope is what the resource needs, all of it; the message says what was missing.
      const needed = [...new Set(short.flatMap((scheme) => scheme.required))];
      context.caller = short[0]!.principal;
      context.authFailure = new ApiError(
        403,
        'insufficient_scope',
        `the access token lacks the scope${scopes.length > 1 ? 's' : ''} ${scopes.join(', ')} this operation requires`,
        {
          'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed.join(' ')}"`,
        },
      );
      return;
    }
    const failures = results.flat().filter((scheme): scheme is Extract<SchemeResult, { why: 'invalid' }> => !scheme.ok && scheme.why === 'invalid');
    if (failures.length === 0) {
      if (mode !== 'optional') context.authFailure = missing();
      return;
    }
    const [first] = failures;
    context.authFailure =
      first!.error.status === 401
        ? new ApiError(
            401,
            first!.error.code,
            first!.error.message,
            { ...first!.error.headers, 'WWW-Authenticate': challenges(first!.tokenError).join(', ') },
            first!.error.logDetail,
          )
        : first!.error;
  };

  return (req) => {
    let pending = false;
    const results = requirements.map((requirement) =>
      requirement.map(({ scheme, scopes }) => {
        const result = checkScheme(options, scheme, scopes, credentialOf(scheme, req), req);
        if (result instanceof Promise) pending = true;
        return result;
      }),
    );
    if (!pending) return decide(req, results as SchemeResult[][]);
    return Promise.all(results.map((requirement) => Promise.all(requirement))).then((settled) => decide(req, settled));
  };
}

/** One scheme of a requirement: its credential verified, its scopes checked. */
function checkScheme(
  options: AuthenticationOptions,
  scheme: SecurityScheme,
  scopes: readonly string[],
  credential: Credential | 'malformed' | undefined,
  req: Request,
): SchemeResult | Promise<SchemeResult> {
  if (credential === undefined) return { ok: false, why: 'missing' };
  if (credential === 'malformed') {
    const form = scheme.type === 'http' && scheme.scheme === 'basic' ? 'Basic' : 'Bearer';
    return invalid(new ApiError(401, 'unauthorized', `Authorization header must use the ${form} scheme: ${howToSend(scheme).replace(/^Authorization: /, '')}`));
  }
  switch (credential.kind) {
    case 'key':
      return settle(() => options.check.key(credential.key, scheme, req));
    case 'basic': {
      // The key as the user name (empty password), or as the password.
      const candidates = [credential.username, credential.password].filter((candidate) => candidate !== '');
      if (candidates.length === 0) return invalid(new ApiError(401, 'unauthorized', 'invalid API key'));
      const first = settle(() => options.check.key(candidates[0]!, scheme, req));
      if (candidates.length === 1) return first;
      const orSecond = (result: SchemeResult): SchemeResult | Promise<SchemeResult> =>
        result.ok || result.why !== 'invalid' || result.error.status !== 401 ? result : settle(() => options.check.key(candidates[1]!, scheme, req));
      return first instanceof Promise ? first.then(orSecond) : orSecond(first);
    }
    case 'token': {
      const verify = options.verifyToken;
      if (!verify) {
        return invalid(
          new ApiError(
            401,
            'unauthorized',
            `the ${scheme.type} scheme ${scheme.name} cannot be checked: the server has no OAUTH2_JWKS_URL to verify access tokens with`,
          ),
        );
      }
      return verify(credential.token).then(
        (token): SchemeResult => {
          const principal = options.check.token(token, scheme);
          const lacking = scopes.filter((scope) => !token.scopes.has(scope));
          return lacking.length === 0 ? { ok: true, principal } : { ok: false, why: 'scope', principal, missing: lacking, required: scopes };
        },
        (error: unknown): SchemeResult => {
          if (error instanceof TokenRejected)
            return { ...invalid(new ApiError(401, 'unauthorized', `invalid access token: ${error.message}`)), tokenError: error.message };
          if (error instanceof TokenKeysUnavailable) {
            return invalid(
              new ApiError(503, 'unavailable', 'service temporarily unavailable: access tokens cannot be checked now; retry later', { 'Retry-After': '5' }),
            );
          }
          throw error;
        },
      );
    }
  }
}

const invalid = (error: ApiError): Extract<SchemeResult, { why: 'invalid' }> => ({ ok: false, why: 'invalid', error });

/** A key check's outcome as a result: a refusal (ApiError) or an outage (503) is a failed scheme; a bug is thrown. */
function settle(check: () => Principal | Promise<Principal>): SchemeResult | Promise<SchemeResult> {
  const failed = (error: unknown): SchemeResult => {
    if (error instanceof ApiError) return invalid(error);
    if (isUnavailable(error)) return invalid(toApiError(error));
    throw error;
  };
  let outcome: Principal | Promise<Principal>;
  try {
    outcome = check();
  } catch (error) {
    return failed(error);
  }
  return outcome instanceof Promise ? outcome.then((principal): SchemeResult => ({ ok: true, principal }), failed) : { ok: true, principal: outcome };
}

/**
 * The require-caller phase: answers the refusal `authenticate` recorded
 * (401, 403 or 503), once the rate limits have counted the request.
 *
 * @example stages.push(requireCaller);
 */
export const requireCaller: Stage = (req) => {
  const { authFailure } = contextOf(req);
  if (authFailure) throw authFailure;
};

export type { SecurityRequirement };
