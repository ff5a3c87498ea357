/**
 * JSON Merge Patch (RFC 7396): a patch object sets each of its members on the
 * target, recursively for objects, and a `null` member removes the target's;
 * a patch that is not an object replaces the target whole. The target is not
 * changed: the result is a new value.
 *
 * @example applyMergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null }, e: 4 }) // { a: 1, b: { d: 3 }, e: 4 }
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    // Defined, not assigned: a member named `__proto__` stays a member and never becomes the prototype.
    else Object.defineProperty(result, name, { value: applyMergePatch(result[name], value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

/** A JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
