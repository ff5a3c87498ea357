import type { Middleware } from 'openapi-fetch';

/** A security scheme as the generated `securitySchemes` of a version describe it. */
export interface DeclaredScheme {
  readonly type: string;
  readonly scheme?: string;
  readonly in?: string;
  readonly name?: string;
}

/** What a version's generated operation table (generated/vN/operations.ts) tells a client about security. */
export interface ContractSecurity {
  readonly operationTable: Readonly<
    Record<string, { readonly method: string; readonly path: string; readonly security: ReadonlyArray<ReadonlyArray<string>> }>
  >;
  readonly securitySchemes: Readonly<Record<string, DeclaredScheme>>;
}

/** What the caller holds: an API key (for bearer, basic and apiKey schemes), an access token (oauth2, openIdConnect), or both. */
export interface Credentials {
  apiKey?: string;
  accessToken?: string;
}

/**
 * Presents the credentials the way the contract declares them, per
 * operation (found by method and path template): the first of its security
 * requirements the credentials can meet, each scheme of it as it says (an
 * API key as `Authorization: Bearer`, as `Basic base64(key:)`, as the named
 * header, query parameter or cookie; an access token as `Authorization:
 * Bearer`). An anonymous operation gets nothing; a request the table does
 * not know, the first secured operation's credentials.
 *
 * @example client.use(declaredCredentials({ operationTable, securitySchemes }, { apiKey }));
 */
export function declaredCredentials(contract: ContractSecurity, credentials: Credentials): Middleware {
  const operations = Object.values(contract.operationTable);
  const byRoute = new Map(operations.map((operation) => [`${operation.method.toUpperCase()} ${operation.path}`, operation.security]));
  // A request the table does not know (a path of another version) still carries the credentials, as the
  // first secured operation takes them, so the server can say 404 rather than 401.
  const fallback = operations.find((operation) => operation.security.length > 0)?.security ?? [];
  return {
    onRequest({ request, schemaPath }) {
      const requirements = byRoute.get(`${request.method} ${schemaPath}`) ?? fallback;
      for (const requirement of requirements) {
        const schemes = requirement.map((name) => contract.securitySchemes[name]);
        if (schemes.length === 0 || !schemes.every((scheme) => scheme && canPresent(scheme, credentials))) continue;
        let presented = request;
        for (const scheme of schemes) presented = present(presented, scheme!, credentials);
        return presented;
      }
      return request;
    },
  };
}

const isToken = (scheme: DeclaredScheme): boolean => scheme.type === 'oauth2' || scheme.type === 'openIdConnect';

function canPresent(scheme: DeclaredScheme, credentials: Credentials): boolean {
  if (isToken(scheme)) return credentials.accessToken !== undefined;
  if (scheme.type === 'http') return credentials.apiKey !== undefined && ['bearer', 'basic'].includes(String(scheme.scheme).toLowerCase());
  return scheme.type === 'apiKey' && credentials.apiKey !== undefined && ['header', 'query', 'cookie'].includes(String(scheme.in));
}

function present(request: Request, scheme: DeclaredScheme, credentials: Credentials): Request {
  if (isToken(scheme)) {
    request.headers.set('Authorization', `Bearer ${credentials.accessToken}`);
    return request;
  }
  const key = credentials.apiKey!;
  if (scheme.type === 'http') {
    const basic = String(scheme.scheme).toLowerCase() === 'basic';
    request.headers.set('Authorization', basic ? `Basic ${btoa(`${key}:`)}` : `Bearer ${key}`);
    return request;
  }
  if (scheme.in === 'header') request.headers.set(scheme.name!, key);
  else if (scheme.in === 'cookie') {
    const cookie = `${scheme.name}=${encodeURIComponent(key)}`;
    request.headers.set('Cookie', request.headers.has('Cookie') ? `${request.headers.get('Cookie')}; ${cookie}` : cookie);
  } else {
    const url = new URL(request.url);
    url.searchParams.set(scheme.name!, key);
    return new Request(url, request);
  }
  return request;
}
