/**
 * Security as a client meets it: an operation's own `security`, else the
 * document's. api-smart-diff compares the two `security` fields where they are
 * written, so it misses that deleting an operation's `security: []` makes the
 * operation inherit the document's requirement (security added), and leaves a
 * new document-level requirement unclassified. This compares the effective
 * requirement of every operation present on both sides instead.
 */
import { HTTP_METHODS, type OpenApiDocument } from '@spec-first/engine/testing';
import type { ChangeVerdict } from './change';

type SecurityRequirement = Record<string, string[]>;

/** A change of the effective security of one operation, in the library's path terms. */
export interface SecurityChange {
  path: Array<string | number>;
  before: SecurityRequirement[];
  after: SecurityRequirement[];
  verdict: ChangeVerdict;
}

/** `security` of an operation as it applies: its own, else the document's; `[]` (or `{}`) means anonymous allowed. */
function effectiveSecurity(document: OpenApiDocument, operation: Record<string, unknown>): SecurityRequirement[] {
  const own = operation['security'] as SecurityRequirement[] | undefined;
  return own ?? (document['security'] as SecurityRequirement[] | undefined) ?? [];
}

/** The alternatives a client may satisfy; no alternative at all means none is needed. */
const alternatives = (requirements: SecurityRequirement[]): SecurityRequirement[] => (requirements.length === 0 ? [{}] : requirements);

/** True when satisfying `held` also satisfies `needed` (every scheme and scope of `needed` is in `held`). */
function satisfies(held: SecurityRequirement, needed: SecurityRequirement): boolean {
  return Object.entries(needed).every(([scheme, scopes]) => scheme in held && scopes.every((scope) => held[scheme]!.includes(scope)));
}

const canonical = (requirements: SecurityRequirement[]): string =>
  JSON.stringify(
    alternatives(requirements)
      .map((alternative) =>
        Object.keys(alternative)
          .sort()
          .map((scheme) => [scheme, [...alternative[scheme]!].sort()]),
      )
      .sort(),
  );

/** Path template with parameter names erased, so `/pets/{petId}` and `/pets/{id}` are the same path. */
const pathShape = (template: string): string => template.replace(/\{[^}]*\}/g, '{}');

/**
 * Every operation on both sides whose effective security changed. Breaking when
 * a client that satisfied one of the old alternatives satisfies none of the new.
 *
 * @example
 * securityChanges(base, head); // [{ path: ['paths', '/store/orders', 'get', 'security'], verdict: { class: 'breaking', ... } }]
 */
export function securityChanges(before: OpenApiDocument, after: OpenApiDocument): SecurityChange[] {
  const changes: SecurityChange[] = [];
  const beforePaths = new Map(Object.entries(before.paths ?? {}).map(([template, item]) => [pathShape(template), item]));
  for (const [template, item] of Object.entries(after.paths ?? {})) {
    const beforeItem = beforePaths.get(pathShape(template));
    if (!beforeItem) continue;
    for (const method of HTTP_METHODS) {
      const beforeOperation = beforeItem[method] as Record<string, unknown> | undefined;
      const afterOperation = item[method] as Record<string, unknown> | undefined;
      if (!beforeOperation || !afterOperation) continue;
      const was = effectiveSecurity(before, beforeOperation);
      const now = effectiveSecurity(after, afterOperation);
      if (canonical(was) === canonical(now)) continue;
      const locked = alternatives(was).some((held) => !alternatives(now).some((needed) => satisfies(held, needed)));
      changes.push({
        path: ['paths', template, method, 'security'],
        before: was,
        after: now,
        verdict: locked
          ? { class: 'breaking', reason: 'requests with the credentials that sufficed are now refused', rule: 'effective-security' }
          : { class: 'non-breaking', reason: 'every request that was accepted is still accepted', rule: 'effective-security' },
      });
    }
  }
  return changes;
}
