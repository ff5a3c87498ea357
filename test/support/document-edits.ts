/**
 * Typed access into a parsed document (an OpenAPI contract read from YAML or
 * JSON) that a test edits in place: the node at the end of a path of keys,
 * narrowed to an object or an array, so the edit that follows is type-checked
 * without declaring the document's whole shape.
 */

/**
 * The object at the end of `keys` under `root` (an array is an object too:
 * number keys index it). Throws, naming the path, when a step is missing or
 * is not an object.
 *
 * @example objectAt(spec, 'paths', '/pets', 'get').security = [];
 * @example objectAt(spec, 'paths', '/pets', 'get', 'parameters', 0, 'schema').maximum = 1000;
 */
export function objectAt(root: unknown, ...keys: Array<string | number>): Record<string, unknown> {
  let node = root;
  for (const [index, key] of keys.entries()) {
    if (node === null || typeof node !== 'object') throw new Error(`${pathOf(keys.slice(0, index))} is not an object`);
    node = (node as Record<string, unknown>)[key];
  }
  if (node === null || typeof node !== 'object') throw new Error(`${pathOf(keys)} is not an object`);
  return node as Record<string, unknown>;
}

/**
 * The array at the end of `keys` under `root`. Throws, naming the path, when
 * it is missing or not an array.
 *
 * @example arrayAt(spec, 'components', 'schemas', 'NewPet', 'required').push('breed');
 */
export function arrayAt(root: unknown, ...keys: Array<string | number>): unknown[] {
  const node = keys.length === 0 ? root : objectAt(root, ...keys.slice(0, -1))[keys.at(-1)!];
  if (!Array.isArray(node)) throw new Error(`${pathOf(keys)} is not an array`);
  return node;
}

const pathOf = (keys: Array<string | number>): string => (keys.length === 0 ? 'the document' : keys.join(' > '));
