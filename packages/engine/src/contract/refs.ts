/**
 * Local `$ref`s (`#/components/...`) of a contract, resolved one way
 * everywhere: the server (mocks), the toolchain (generate, api:diff, the
 * contract fuzzer) and the tests' conformance check.
 */

/** A JSON pointer's segments, unescaped (`~1` is `/`, `~0` is `~`). @example pointerSegments('#/paths/~1pets') // ['paths', '/pets'] */
export const pointerSegments = (ref: string): string[] =>
  ref
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));

/** One segment of a JSON pointer, escaped. @example escapePointer('/pets/{petId}') // '~1pets~1{petId}' */
export const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The node at a local reference; throws for one that points to nothing.
 *
 * @example lookupRef(spec, '#/components/schemas/Pet')
 */
export function lookupRef(document: unknown, ref: string): Record<string, unknown> {
  if (!ref.startsWith('#')) throw new Error(`only local $refs are supported, got ${ref}`);
  const found = pointerSegments(ref).reduce<unknown>(
    (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
    document,
  );
  if (found === undefined) throw new Error(`unresolvable $ref ${ref}`);
  return found as Record<string, unknown>;
}

/** Reference chains longer than this are taken as circular. */
const MAX_HOPS = 64;

/**
 * Follows `$ref`s from `node` until an object that is not a reference: the
 * object, and the pointer where it lives (`undefined` when `node` was not a
 * reference).
 *
 * @example resolveRef(spec, { $ref: '#/components/responses/NotFound' }).node['description']
 */
export function resolveRef(document: unknown, node: unknown): { node: Record<string, unknown>; ref: string | undefined } {
  let current = node as Record<string, unknown>;
  let ref: string | undefined;
  for (let hops = 0; current !== null && typeof current === 'object' && typeof current['$ref'] === 'string'; hops++) {
    if (hops > MAX_HOPS) throw new Error(`$ref chain longer than ${MAX_HOPS} at ${ref} (circular?)`);
    ref = current['$ref'] as string;
    current = lookupRef(document, ref);
  }
  return { node: current, ref };
}

/** `resolveRef`'s object only. @example deref(spec, header)['schema'] */
export const deref = (document: unknown, node: unknown): Record<string, unknown> => resolveRef(document, node).node;
