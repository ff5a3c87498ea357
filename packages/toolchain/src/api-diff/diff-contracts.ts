/**
 * Compares two contracts and classifies every change for deployed clients:
 * api-smart-diff finds and classifies the changes (with `$ref`s resolved), the
 * project's own rules correct it where it was measured wrong, and a change
 * inside `components/` is reported once at each place that uses it, not again
 * under `components/`.
 */
import { apiCompare, type Diff, type DiffType } from 'api-smart-diff';
import type { OpenApiDocument } from '@spec-first/engine/testing';
import type { ChangeClass, ChangeVerdict, ContractChange } from './change';
import { CHANGE_CLASSES } from './change';
import { displayLocation, operationOf, sideOf } from './contract-path';
import { securityChanges } from './effective-security';
import { OWN_RULES, diffContext } from './own-rules';
import { typedDocument } from '../generate/openapi-31-rendering';

export interface DiffOptions {
  /** false: api-smart-diff's classification alone (components still de-duplicated); for measuring the library. */
  ownRules?: boolean;
}

/**
 * The library's five types on the gate's three classes: a deprecation is a
 * non-breaking change (everything keeps working); `unclassified` (tags,
 * `x-` extensions at the root) does not reach a client.
 */
const CLASS_OF: Record<DiffType, ChangeClass> = {
  breaking: 'breaking',
  'non-breaking': 'non-breaking',
  deprecated: 'non-breaking',
  annotation: 'annotation',
  unclassified: 'annotation',
};

/**
 * `components/` entries other than security schemes are reached only through
 * `$ref`s, which the library resolves: their changes are already reported where
 * they are used. (An unused component does not reach a client.)
 */
const isReferencedComponent = (diff: Diff): boolean => diff.path[0] === 'components' && diff.path[1] !== 'securitySchemes';

/** The library's `security` diffs, replaced by the effective-security comparison. */
const isSecurityDiff = (diff: Diff): boolean =>
  diff.path[0] === 'security' || (diff.path[0] === 'paths' && diff.path[3] === 'security' && diff.path.length >= 4);

function defaultReason(changeClass: ChangeClass, diff: Diff): string {
  const side = sideOf(diff.path);
  const isOperation = diff.path[0] === 'paths' && diff.path.length <= 3;
  if (changeClass === 'annotation') return 'documentation only';
  if (changeClass === 'breaking') {
    if (isOperation) return 'clients calling it now fail';
    if (side === 'request') return diff.path.at(-1) === 'default' ? 'requests that omit it now behave differently' : 'requests that were valid are now refused';
    if (side === 'response')
      return diff.action === 'remove' ? 'clients may no longer receive what they rely on' : 'clients may now receive values they do not expect';
    return 'existing clients may break';
  }
  if (diff.type === 'deprecated') return 'deprecated: still works, plan the move';
  if (isOperation) return diff.action === 'add' ? 'a new operation' : 'existing calls keep working';
  if (side === 'request') return 'requests that were valid stay valid';
  if (side === 'response') return 'every response stays within what clients expect';
  return 'existing clients are unaffected';
}

/**
 * Every change from `before` to `after`, breaking first, then non-breaking,
 * then annotations (document order within a class).
 *
 * @example
 * const changes = diffContracts(base, head);
 * // [{ class: 'breaking', location: 'paths./pets.get.parameters.limit.schema.maximum', before: 100, after: 50,
 * //    action: 'replace', reason: 'requests that were valid are now refused', rule: 'bounds-by-direction' }]
 */
export function diffContracts(written: OpenApiDocument, changed: OpenApiDocument, options: DiffOptions = {}): ContractChange[] {
  // api-smart-diff knows 3.1's operations: 3.2's QUERY and additional operations are compared under paths of their own.
  const before = typedDocument(written);
  const after = typedDocument(changed);
  const ownRules = options.ownRules !== false;
  // apiCompare rewrites its inputs (a $ref with siblings becomes allOf); locations are read from the documents as written.
  const { diffs } = apiCompare(structuredClone(before), structuredClone(after));
  const changes: ContractChange[] = [];

  for (const diff of diffs) {
    if (isReferencedComponent(diff)) continue;
    if (ownRules && isSecurityDiff(diff)) continue;
    const libraryClass = CLASS_OF[diff.type];
    let verdict: ChangeVerdict | undefined;
    if (ownRules) {
      const context = diffContext(diff, before, after);
      for (const rule of OWN_RULES) {
        verdict = rule.apply(context);
        if (verdict) break;
      }
    }
    verdict ??= { class: libraryClass, reason: defaultReason(libraryClass, diff) };
    const location = displayLocation(diff.path, before, after);
    const operation = operationOf(diff.path, location, before, after);
    changes.push({
      ...verdict,
      location,
      ...(operation ? { operation } : {}),
      action: diff.action,
      ...(diff.before !== undefined ? { before: diff.before } : {}),
      ...(diff.after !== undefined ? { after: diff.after } : {}),
    });
  }

  if (ownRules) {
    for (const change of securityChanges(before, after)) {
      const location = displayLocation(change.path, before, after);
      const operation = operationOf(change.path, location, before, after);
      changes.push({ ...change.verdict, location, ...(operation ? { operation } : {}), action: 'replace', before: change.before, after: change.after });
    }
  }
  const told = changes.map(asWritten);
  return CHANGE_CLASSES.flatMap((changeClass) => told.filter((change) => change.class === changeClass));
}

/** A change found under a path of its own (`/books (QUERY)`, as POST) told where the document writes it: `paths./books.query`. */
function asWritten(change: ContractChange): ContractChange {
  const match = /^paths\.(.+?) \(([A-Z][A-Z-]*)\)\.post(\.|$)/.exec(change.location);
  if (!match) return change;
  const [, template, method] = match;
  const where = method === 'QUERY' ? 'query' : `additionalOperations.${method}`;
  return {
    ...change,
    location: `paths.${template}.${where}${change.location.slice(match[0].length - match[3]!.length)}`,
    ...(change.operation && { operation: { ...change.operation, method: method!.toLowerCase(), path: template! } }),
  };
}
