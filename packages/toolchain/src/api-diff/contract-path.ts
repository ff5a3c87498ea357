/**
 * Paths into a contract as api-smart-diff reports them, and what they mean:
 * which side of the exchange (request or response) a change is on, which JSON
 * Schema keyword changed, the node a path designates in the original YAML, and
 * the readable location printed to the designer.
 *
 * api-smart-diff reports paths in its own normalised document: `$ref`s are
 * resolved, a `$ref` with sibling keywords becomes `allOf: [target, siblings]`,
 * and parameters are array indices. `locate` and `displayLocation` map such a
 * path back onto the YAML the designer wrote.
 */
import { HTTP_METHODS, type OpenApiDocument, pointerSegments } from '@spec-first/engine/testing';
import type { ChangeOperation } from './change';

export type JsonPath = ReadonlyArray<string | number>;

/** Where a change lands for a client: what it sends, what it receives, or neither. */
export type Side = 'request' | 'response' | 'other';

/** Array-valued keywords whose item index means nothing to a reader (`enum.3` is just "enum"). */
const INDEXED_KEYWORDS = new Set(['enum', 'required', 'type', 'examples']);

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The side of the exchange a path is on: under `parameters` or `requestBody` a
 * client sends it; under `responses` it receives it.
 *
 * @example
 * sideOf(['paths', '/pets', 'get', 'parameters', 0, 'schema', 'maximum']); // 'request'
 */
export function sideOf(path: JsonPath): Side {
  if (path[0] !== 'paths') return 'other';
  // paths./p.parameters (path-item level) or paths./p.<method>.(parameters|requestBody|responses)
  const section = path[2] === 'parameters' ? 'parameters' : path[3];
  if (section === 'parameters' || section === 'requestBody') return 'request';
  if (section === 'responses') return 'response';
  return 'other';
}

/**
 * The JSON Schema keyword a path ends on (array index of `enum`, `required`,
 * `type` dropped), or undefined when the path ends on a property name.
 *
 * @example
 * schemaKeyword(['paths', '/pets', 'get', 'parameters', 1, 'schema', 'enum', 3]); // 'enum'
 */
export function schemaKeyword(path: JsonPath): string | undefined {
  const trimmed = withoutItemIndex(path);
  const last = trimmed[trimmed.length - 1];
  const parent = trimmed[trimmed.length - 2];
  if (typeof last !== 'string' || parent === 'properties' || parent === 'patternProperties') return undefined;
  return trimmed.includes('schema') ? last : undefined;
}

/** The path without a trailing item index of an array-valued keyword (`...enum.3` -> `...enum`). */
export function withoutItemIndex(path: JsonPath): JsonPath {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  return typeof last === 'number' && typeof parent === 'string' && INDEXED_KEYWORDS.has(parent) ? path.slice(0, -1) : path;
}

/** Follows local `$ref`s (`#/components/...`) until a node that is not a reference. */
export function deref(document: OpenApiDocument, node: unknown): unknown {
  let current = node;
  for (let hops = 0; isRecord(current) && typeof current['$ref'] === 'string'; hops++) {
    const ref = current['$ref'] as string;
    if (!ref.startsWith('#/') || hops > 64) return current; // external or circular: leave as written
    current = pointerSegments(ref).reduce<unknown>((value, key) => (isRecord(value) ? value[key] : undefined), document);
  }
  return current;
}

interface Step {
  /** The node reached (references resolved). */
  node: unknown;
  /** How the segment reads in a location ('' for a segment the designer never wrote). */
  label: string;
}

/**
 * Walks `path` through the document as written, resolving `$ref`s and the
 * `allOf: [target, siblings]` that api-smart-diff makes of a `$ref` with
 * siblings. Returns one step per segment (undefined nodes past a missing key).
 */
function walk(document: OpenApiDocument, path: JsonPath): Step[] {
  const steps: Step[] = [];
  let raw: unknown = document;
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    const node = deref(document, raw);
    const refWithSiblings = isRecord(raw) && typeof raw['$ref'] === 'string' && Object.keys(raw).length > 1;
    if (segment === 'allOf' && refWithSiblings && !(isRecord(node) && 'allOf' in node)) {
      // Virtual allOf: item 0 is the $ref's target, item 1 the sibling keywords.
      const { $ref: _ref, ...siblings } = raw as Json;
      const item = path[index + 1];
      raw = item === 0 ? node : siblings;
      steps.push({ node: undefined, label: '' }, { node: raw, label: '' });
      index++;
      continue;
    }
    const container = node as Json | unknown[] | undefined;
    raw = container === undefined || container === null ? undefined : (container as Json)[segment as string];
    const resolved = deref(document, raw);
    const isParameter = typeof segment === 'number' && path[index - 1] === 'parameters' && isRecord(resolved);
    steps.push({ node: resolved, label: isParameter ? String(resolved['name']) : String(segment) });
  }
  return steps;
}

/**
 * The node a library path designates in a document as written (references
 * resolved), or undefined when it does not exist there.
 *
 * @example
 * locate(spec, ['paths', '/pets', 'get', 'parameters', 0, 'schema', 'maximum']); // 100
 */
export function locate(document: OpenApiDocument, path: JsonPath): unknown {
  if (path.length === 0) return document;
  return walk(document, path).at(-1)?.node;
}

/**
 * The location printed for a change: dotted, parameters by name, without the
 * library's virtual `allOf` and item indices. Labels come from the document
 * that has the node (`after` for an addition, else `before`).
 *
 * @example
 * displayLocation(['paths', '/pets', 'get', 'parameters', 0, 'schema', 'maximum'], base, head);
 * // 'paths./pets.get.parameters.limit.schema.maximum'
 */
export function displayLocation(path: JsonPath, before: OpenApiDocument, after: OpenApiDocument): string {
  const trimmed = withoutItemIndex(path);
  const fromBefore = walk(before, trimmed);
  const fromAfter = walk(after, trimmed);
  return trimmed
    .map((segment, index) => {
      const step = fromBefore[index]?.node !== undefined ? fromBefore[index] : fromAfter[index];
      return step ? step.label : String(segment);
    })
    .filter((label) => label !== '')
    .join('.');
}

const isMethod = (segment: unknown): segment is string => (HTTP_METHODS as readonly unknown[]).includes(segment);

/**
 * The operation a library path is in, with the printed location inside it,
 * or undefined outside operations. The operationId is read from the side
 * that has the operation (`after` first: an added one is only there).
 *
 * @example
 * operationOf(['paths', '/pets', 'get', 'parameters', 0], 'paths./pets.get.parameters.limit', base, head);
 * // { operationId: 'listPets', method: 'get', path: '/pets', at: 'parameters.limit' }
 */
export function operationOf(path: JsonPath, location: string, before: OpenApiDocument, after: OpenApiDocument): ChangeOperation | undefined {
  const [root, template, method] = path;
  if (root !== 'paths' || typeof template !== 'string' || !isMethod(method)) return undefined;
  const operation = (after.paths?.[template]?.[method] ?? before.paths?.[template]?.[method]) as { operationId?: unknown } | undefined;
  // The first three labels are the segments as written (only parameters and allOf are relabelled, deeper down).
  const prefix = `paths.${template}.${method}`;
  const at = location === prefix ? '' : location.startsWith(`${prefix}.`) ? location.slice(prefix.length + 1) : location;
  return { ...(typeof operation?.operationId === 'string' ? { operationId: operation.operationId } : {}), method, path: template, at };
}
