import type { OpenApiDocument, SpecOperation } from './load-spec';

/**
 * Whether an operation requires an API key. OpenAPI: the operation's
 * `security` replaces the document's; an empty list (`security: []`), an
 * empty requirement (`- {}`) or no security at all means anonymous access.
 *
 * @example requiresApiKey(spec, op) // false for an operation with `security: []`
 */
export function requiresApiKey(spec: OpenApiDocument, op: SpecOperation): boolean {
  const requirements = (op.operation['security'] ?? spec['security'] ?? []) as Array<Record<string, unknown>>;
  return requirements.length > 0 && requirements.every((requirement) => Object.keys(requirement).length > 0);
}
