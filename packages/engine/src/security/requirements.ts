import type { OpenApiDocument, SecurityRequirement, SpecOperation } from '../contract/document';
import { servedSchemes, type SecurityScheme } from './schemes';

/**
 * The security requirements that apply to an operation: its own `security`
 * replaces the document's (OpenAPI). A list is OR, the schemes of one
 * requirement are AND; an empty requirement (`- {}`) admits anonymous
 * callers, and so does an empty list (`security: []`) or none at all.
 *
 * @example effectiveSecurity(spec, op) // [{ bearerAuth: [] }, { oAuth2: ['read:account'] }]
 */
export function effectiveSecurity(spec: OpenApiDocument, op: SpecOperation | undefined): SecurityRequirement[] {
  return (op?.operation.security ?? spec.security ?? []) as SecurityRequirement[];
}

/**
 * How an operation treats anonymous callers: `required` (every requirement
 * names a scheme), `optional` (an empty requirement sits beside others: a
 * caller may identify, and is checked when it does), `none` (no requirement
 * at all: credentials are not examined).
 */
export type Authentication = 'required' | 'optional' | 'none';

/** @example authenticationOf(spec, op) // 'required' */
export function authenticationOf(spec: OpenApiDocument, op: SpecOperation | undefined): Authentication {
  const requirements = effectiveSecurity(spec, op);
  const named = requirements.filter((requirement) => Object.keys(requirement).length > 0);
  if (named.length === 0) return 'none';
  return named.length === requirements.length ? 'required' : 'optional';
}

/** An operation's security, resolved for the authenticate phase. */
export interface ResolvedSecurity {
  /** The requirements whose every scheme the engine can check (OR of ANDs). */
  requirements: Array<Array<{ scheme: SecurityScheme; scopes: string[] }>>;
  mode: Authentication;
  /** Schemes named by requirements the engine cannot check (such a requirement can never pass). */
  unsupported: string[];
}

/**
 * The requirements of an operation (a request that matched none: the
 * document's own) with their schemes resolved.
 *
 * @example resolvedSecurity(spec, op).requirements[0][0].scheme.type // 'http'
 */
export function resolvedSecurity(spec: OpenApiDocument, op: SpecOperation | undefined): ResolvedSecurity {
  const schemes = servedSchemes(spec.components?.securitySchemes);
  const unsupported = new Set<string>();
  const requirements: ResolvedSecurity['requirements'] = [];
  for (const requirement of effectiveSecurity(spec, op)) {
    const names = Object.keys(requirement);
    if (names.length === 0) continue;
    const missing = names.filter((name) => !schemes.has(name));
    if (missing.length > 0) {
      for (const name of missing) unsupported.add(name);
      continue;
    }
    requirements.push(names.map((name) => ({ scheme: schemes.get(name)!, scopes: requirement[name] ?? [] })));
  }
  return { requirements, mode: authenticationOf(spec, op), unsupported: [...unsupported] };
}
