import type { Request } from 'express';
import { bearerToken } from './bearer';
import { cookiePairs } from '../request/cookies';
import { placementOf, type DeclaredScheme } from '../credentials/placement';

/**
 * The security schemes OpenAPI defines, as the engine serves them:
 *
 * - `http` `bearer`: `Authorization: Bearer <key>`;
 * - `http` `basic`: `Authorization: Basic base64(<key>:)` (the key as the
 *   user name, Stripe's convention), or the key as the password;
 * - `apiKey` `in: header | query | cookie`, named N: the key as that header,
 *   query parameter or cookie;
 * - `oauth2` and `openIdConnect`: `Authorization: Bearer <JWT>`, verified
 *   against a JWKS (tokens.ts), its scopes checked.
 *
 * Other `http` schemes (digest, negotiate...) and `mutualTLS` are refused
 * by name when the contract is loaded (refusals.ts).
 */
export type SecurityScheme =
  | { readonly name: string; readonly type: 'http'; readonly scheme: 'bearer' | 'basic' }
  | { readonly name: string; readonly type: 'apiKey'; readonly in: 'header' | 'query' | 'cookie'; readonly parameter: string }
  | { readonly name: string; readonly type: 'oauth2' | 'openIdConnect' };

/** What a request presents for one scheme: a key (apiKey, bearer), the two halves of Basic, a token. */
export type Credential =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'token'; readonly token: string };

/** The scheme's credential in the request; `undefined` when absent, `'malformed'` when present but not of the scheme's form. */
export function credentialOf(scheme: SecurityScheme, req: Request): Credential | 'malformed' | undefined {
  switch (scheme.type) {
    case 'http':
      return scheme.scheme === 'bearer' ? bearer(req, 'key') : basic(req.headers.authorization);
    case 'oauth2':
    case 'openIdConnect':
      return bearer(req, 'token');
    case 'apiKey': {
      const value = apiKeyValue(scheme, req);
      return value === undefined || value === '' ? undefined : { kind: 'key', key: value };
    }
  }
}

function bearer(req: Request, kind: 'key' | 'token'): Credential | 'malformed' | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const token = bearerToken(header);
  if (token === undefined) return 'malformed';
  return kind === 'key' ? { kind, key: token } : { kind, token };
}

/** `Basic base64(user:password)` (RFC 7617; the scheme is case-insensitive). */
function basic(header: string | undefined): Credential | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return 'malformed';
  return { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function apiKeyValue(scheme: Extract<SecurityScheme, { type: 'apiKey' }>, req: Request): string | undefined {
  switch (scheme.in) {
    case 'header':
      return req.get(scheme.parameter);
    case 'query': {
      const value = (req.query as Record<string, unknown>)[scheme.parameter];
      return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
    }
    case 'cookie':
      return cookiePairs(req.headers.cookie).find(([name]) => name === scheme.parameter)?.[1];
  }
}

/** Whether the request carries anything for this scheme at all (the `Authorization` header counts for every http and token scheme). */
export const presents = (scheme: SecurityScheme, req: Request): boolean => credentialOf(scheme, req) !== undefined;

/**
 * The `WWW-Authenticate` challenge of a scheme (RFC 9110 11.6.1). An API key
 * in a header, query parameter or cookie has no registered scheme: its
 * challenge is `ApiKey` with where and under which name to send it.
 *
 * @example challengeOf(bearerScheme, 'pet-adoption') // 'Bearer realm="pet-adoption"'
 */
export function challengeOf(scheme: SecurityScheme, realm: string, tokenError?: string): string {
  switch (scheme.type) {
    case 'http':
      return scheme.scheme === 'bearer' ? `Bearer realm="${realm}"` : `Basic realm="${realm}", charset="UTF-8"`;
    case 'apiKey':
      return `ApiKey realm="${realm}", in="${scheme.in}", name="${scheme.parameter}"`;
    case 'oauth2':
    case 'openIdConnect':
      return `Bearer realm="${realm}"${tokenError ? `, error="invalid_token", error_description="${tokenError.replace(/["\\]/g, '')}"` : ''}`;
  }
}

/** How to send a credential of this scheme, for the 401's message: `Authorization: Bearer <API_KEY>`. */
export function howToSend(scheme: SecurityScheme): string {
  switch (scheme.type) {
    case 'http':
      return scheme.scheme === 'bearer' ? 'Authorization: Bearer <API_KEY>' : 'Authorization: Basic base64(<API_KEY>:)';
    case 'apiKey':
      return scheme.in === 'header'
        ? `${scheme.parameter}: <API_KEY>`
        : scheme.in === 'query'
          ? `the query parameter ${scheme.parameter}=<API_KEY>`
          : `the cookie ${scheme.parameter}=<API_KEY>`;
    case 'oauth2':
    case 'openIdConnect':
      return 'Authorization: Bearer <ACCESS_TOKEN>';
  }
}

/** What the credential is called in messages. */
export const credentialNoun = (scheme: SecurityScheme): string => (scheme.type === 'oauth2' || scheme.type === 'openIdConnect' ? 'access token' : 'API key');

/**
 * The schemes of a document the engine serves, by name; what it cannot serve
 * is left out here and reported by refusals.ts.
 */
export function servedSchemes(definitions: Record<string, unknown> | undefined): Map<string, SecurityScheme> {
  const schemes = new Map<string, SecurityScheme>();
  for (const [name, raw] of Object.entries(definitions ?? {})) {
    const definition = raw as DeclaredScheme;
    // Where its credential goes decides whether it is served (credentials/placement.ts, shared with the client and the fuzzer).
    const placement = placementOf(definition);
    if (!placement) continue;
    if (placement.holds === 'token') schemes.set(name, { name, type: definition.type as 'oauth2' | 'openIdConnect' });
    else if (placement.in === 'authorization') schemes.set(name, { name, type: 'http', scheme: placement.form });
    else schemes.set(name, { name, type: 'apiKey', in: placement.in, parameter: placement.name });
  }
  return schemes;
}
