/**
 * Specification extensions (`x-` members): what a document says for other
 * tools (documentation renderers, gateways, code generators). The engine
 * reads a few by name (`x-sunset`, ...); everything else passes it by, and a
 * `$ref` inside one (a documentation topic beside the document) is for the
 * tool that reads that extension: Redocly's bundler leaves it as it is.
 */

/** Members of OpenAPI and JSON Schema objects whose keys are names chosen by the author, not fields: `x-rate` there is a name, not an extension. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
  'schemas',
  'responses',
  'parameters',
  'examples',
  'requestBodies',
  'headers',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
  'webhooks',
  'encoding',
  'content',
  'variables',
]);

/** Whether `key`, a member of an object that is itself the member `parentKey` (undefined at the root), is an extension. */
export const isExtension = (key: string, parentIsNameMap: boolean): boolean => !parentIsNameMap && key.startsWith('x-');

/** Whether the members of the object found under `key` are names (given that `key` is a field, not a name). */
export const holdsNames = (key: string, keyIsName: boolean): boolean => !keyIsName && NAME_MAPS.has(key);

/**
 * A copy of a document (or any part of it) without its extensions, at every
 * depth; a member named `x-...` of a map of names is kept.
 *
 * @example withoutExtensions({ 'x-topics': [], paths: {} }) // { paths: {} }
 */
export function withoutExtensions<T>(node: T, isNameMap = false): T {
  if (Array.isArray(node)) return node.map((item) => withoutExtensions(item)) as T;
  if (node === null || typeof node !== 'object') return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (isExtension(key, isNameMap)) continue;
    const child = withoutExtensions(value, holdsNames(key, isNameMap));
    if (key === '__proto__') Object.defineProperty(copy, key, { value: child, writable: true, enumerable: true, configurable: true });
    else copy[key] = child;
  }
  return copy as T;
}
