import type { Middleware } from 'openapi-fetch';

import { authorizationValue, placementOf } from '@spec-first/engine';
import type { TabledOperation } from './methods';

/** A security scheme as a document declares it. */
type DeclaredScheme = Parameters<typeof placementOf>[0];

export type { DeclaredScheme };

/** What a version's generated operation table (generated/vN/operations.ts) tells a client about security. */
export interface ContractSecurity {
  readonly operationTable: Readonly<Record<string, TabledOperation & { readonly security: ReadonlyArray<ReadonlyArray<string>> }>>;
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
  // A 3.2 QUERY or additional operation arrives here under its typed path, already sent with its own method (declaredMethods).
  const byRoute = new Map(
    operations.map((operation) => [`${operation.method.toUpperCase()} ${operation.typedAs?.path ?? operation.path}`, operation.security]),
  );
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

/** Whether the caller holds what the scheme takes: an access token for a token scheme, else an API key. */
function canPresent(scheme: DeclaredScheme, credentials: Credentials): boolean {
  const placement = placementOf(scheme);
  if (!placement) return false;
  return placement.holds === 'token' ? credentials.accessToken !== undefined : credentials.apiKey !== undefined;
}

/** The request with the scheme's credential where its placement says. */
function present(request: Request, scheme: DeclaredScheme, credentials: Credentials): Request {
  const placement = placementOf(scheme)!;
  const credential = placement.holds === 'token' ? credentials.accessToken! : credentials.apiKey!;
  switch (placement.in) {
    case 'authorization':
      request.headers.set('Authorization', authorizationValue(placement.form, credential));
      return request;
    case 'header':
      request.headers.set(placement.name, credential);
      return request;
    case 'cookie': {
      const cookie = `${placement.name}=${encodeURIComponent(credential)}`;
      request.headers.set('Cookie', request.headers.has('Cookie') ? `${request.headers.get('Cookie')}; ${cookie}` : cookie);
      return request;
    }
    case 'query': {
      const url = new URL(request.url);
      url.searchParams.set(placement.name, credential);
      return new Request(url, request);
    }
  }
}
