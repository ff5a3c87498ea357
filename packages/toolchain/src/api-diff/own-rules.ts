/**
 * The project's corrections to api-smart-diff 1.0.6, each where it was
 * measured wrong on OpenAPI 3.1 (test/api-diff.test.ts has one case per rule,
 * with what the library alone says). The principle every rule applies: on a
 * request, narrowing what is accepted breaks clients and widening does not; on
 * a response it is the other way round.
 */
import type { Diff } from 'api-smart-diff';
import type { OpenApiDocument } from '@spec-first/engine/testing';
import type { ChangeVerdict } from './change';
import { locate, schemaKeyword, sideOf, withoutItemIndex, type JsonPath, type Side } from './contract-path';

export interface DiffContext {
  diff: Diff;
  side: Side;
  /** The JSON Schema keyword that changed, when the change is inside a schema. */
  keyword: string | undefined;
  before: OpenApiDocument;
  after: OpenApiDocument;
}

export interface OwnRule {
  name: string;
  /** A verdict when the rule applies to this change, else undefined (the library's class stands). */
  apply(context: DiffContext): ChangeVerdict | undefined;
}

const REQUEST_NARROWED = 'requests that were valid are now refused';
const REQUEST_WIDENED = 'requests that were valid stay valid';
const RESPONSE_WIDENED = 'clients may now receive values they do not expect';
const RESPONSE_NARROWED = 'every response stays within what clients expect';

/** The verdict for a schema change that narrows, widens, or both (changed), on the side it is on. */
function byDirection(side: Side, narrows: boolean, widens: boolean, rule: string): ChangeVerdict | undefined {
  if (side === 'other') return undefined;
  if (narrows && widens) return { class: 'breaking', reason: side === 'request' ? REQUEST_NARROWED : RESPONSE_WIDENED, rule };
  if (side === 'request') {
    return narrows ? { class: 'breaking', reason: REQUEST_NARROWED, rule } : { class: 'non-breaking', reason: REQUEST_WIDENED, rule };
  }
  return widens ? { class: 'breaking', reason: RESPONSE_WIDENED, rule } : { class: 'non-breaking', reason: RESPONSE_NARROWED, rule };
}

/** Values of the changed keyword itself on both sides, read from the documents (not the library's item-level values). */
function keywordValues(context: DiffContext): [unknown, unknown] {
  const path = withoutItemIndex(context.diff.path);
  return [locate(context.before, path), locate(context.after, path)];
}

const JSON_TYPES = ['null', 'boolean', 'object', 'array', 'number', 'string', 'integer'];
const typeSet = (type: unknown): string[] => (type === undefined ? JSON_TYPES : Array.isArray(type) ? type.map(String) : [String(type)]);
/** `integer` values are `number` values too. */
const covers = (types: string[], type: string): boolean => types.includes(type) || (type === 'integer' && types.includes('number'));

/**
 * `type` compared as the set of values it admits, with integer inside number.
 * The library calls `number` -> `integer` on a request non-breaking, and a
 * response's `string` -> `integer` or `string` -> `[string, null]` non-breaking.
 */
const typeBySet: OwnRule = {
  name: 'type-by-set',
  apply(context) {
    if (context.keyword !== 'type') return undefined;
    const [before, after] = keywordValues(context).map(typeSet) as [string[], string[]];
    const narrows = before.some((type) => !covers(after, type));
    const widens = after.some((type) => !covers(before, type));
    if (!narrows && !widens) return { class: 'annotation', reason: 'the same types, written differently', rule: 'type-by-set' };
    return byDirection(context.side, narrows, widens, 'type-by-set');
  },
};

const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);
const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);

/**
 * Every numeric bound by direction. The library gets request bounds and a
 * response's `maxLength` right, but calls a lowered `minimum` or a raised
 * `maxItems` on a response non-breaking.
 */
const boundsByDirection: OwnRule = {
  name: 'bounds-by-direction',
  apply(context) {
    const keyword = context.keyword ?? '';
    if (!UPPER_BOUNDS.has(keyword) && !LOWER_BOUNDS.has(keyword)) return undefined;
    const [before, after] = keywordValues(context);
    if ((before !== undefined && typeof before !== 'number') || (after !== undefined && typeof after !== 'number')) return undefined;
    // An absent bound is no bound: +infinity for a maximum, -infinity for a minimum.
    const sign = UPPER_BOUNDS.has(keyword) ? 1 : -1;
    const was = before === undefined ? Infinity : sign * before;
    const now = after === undefined ? Infinity : sign * after;
    return byDirection(context.side, now < was, now > was, 'bounds-by-direction');
  },
};

const isClosed = (schema: unknown): boolean =>
  typeof schema === 'object' &&
  schema !== null &&
  ((schema as Record<string, unknown>)['additionalProperties'] === false || (schema as Record<string, unknown>)['unevaluatedProperties'] === false);

/**
 * A property added to a response object that was closed (`additionalProperties:
 * false`): a client validating against the old schema refuses it; the library
 * calls it non-breaking. And a property removed from a closed request object:
 * a client still sending it is refused; the library calls it non-breaking.
 */
const closedObjectProperties: OwnRule = {
  name: 'closed-object-properties',
  apply({ diff, side, before, after }) {
    const path: JsonPath = diff.path;
    if (path[path.length - 2] !== 'properties' || !path.includes('schema')) return undefined;
    const parent = path.slice(0, -2);
    if (diff.action === 'add' && side === 'response' && isClosed(locate(before, parent))) {
      return {
        class: 'breaking',
        reason: 'a new field in an object that allowed none: clients validating responses refuse it',
        rule: 'closed-object-properties',
      };
    }
    if (diff.action === 'remove' && side === 'request' && isClosed(locate(after, parent))) {
      return { class: 'breaking', reason: 'requests that still send this field are now refused (no additional properties)', rule: 'closed-object-properties' };
    }
    return undefined;
  },
};

/**
 * `additionalProperties` / `unevaluatedProperties` turned to or from `false`:
 * closing a request object refuses requests with extra fields (the library
 * calls it non-breaking); opening a response object lets unknown fields through.
 */
const closingObjects: OwnRule = {
  name: 'closing-objects',
  apply(context) {
    if (context.keyword !== 'additionalProperties' && context.keyword !== 'unevaluatedProperties') return undefined;
    const [before, after] = keywordValues(context);
    const closes = before !== false && after === false;
    const opens = before === false && after !== false;
    if (!closes && !opens) return undefined;
    return byDirection(context.side, closes, opens, 'closing-objects');
  },
};

/**
 * A required request body added to an operation that had none: every existing
 * call lacks it. The library calls the addition non-breaking.
 */
const requiredBodyAdded: OwnRule = {
  name: 'required-body-added',
  apply({ diff, after }) {
    const path = diff.path;
    if (diff.action !== 'add' || path[0] !== 'paths' || path.length !== 4 || path[3] !== 'requestBody') return undefined;
    const body = locate(after, path) as { required?: unknown } | undefined;
    return body?.required === true
      ? { class: 'breaking', reason: 'a new required request body: existing requests are refused', rule: 'required-body-added' }
      : undefined;
  },
};

/** Declaring a security scheme changes nothing until an operation requires it (reported at the operation). The library calls it breaking. */
const securitySchemeDeclared: OwnRule = {
  name: 'security-scheme-declared',
  apply({ diff }) {
    const [root, section] = diff.path;
    return diff.action === 'add' && root === 'components' && section === 'securitySchemes' && diff.path.length === 3
      ? { class: 'non-breaking', reason: 'a scheme is declared; operations that require it are reported themselves', rule: 'security-scheme-declared' }
      : undefined;
  },
};

/** The rules in order; the first that applies decides. */
export const OWN_RULES: readonly OwnRule[] = [typeBySet, boundsByDirection, closedObjectProperties, closingObjects, requiredBodyAdded, securitySchemeDeclared];

/** The context a rule needs for one library diff. */
export function diffContext(diff: Diff, before: OpenApiDocument, after: OpenApiDocument): DiffContext {
  return { diff, side: sideOf(diff.path), keyword: schemaKeyword(diff.path), before, after };
}
