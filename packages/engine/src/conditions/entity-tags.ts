/**
 * Entity tags (RFC 9110 8.8.3) as `If-Match` and `If-None-Match` carry them,
 * and the two comparison functions of 8.8.3.2.
 */

/** One entity tag: its opaque part (without quotes) and whether it is weak (`W/`). */
export interface EntityTag {
  readonly opaque: string;
  readonly weak: boolean;
}

/** A condition header's value: `*` (any current representation), or a list of tags. */
export type TagCondition = '*' | readonly EntityTag[];

/** etagc = %x21 / %x23-7E / obs-text: any visible character but the double quote. */
const OPAQUE = /^[\x21\x23-\x7e\x80-\xff]*$/;
const TAG = /\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/y;

/**
 * Parses `*` or a comma-separated list of entity tags; undefined when the
 * value is neither (the caller answers 400).
 *
 * @example parseTagCondition('W/"1", "2"') // [{ opaque: '1', weak: true }, { opaque: '2', weak: false }]
 */
export function parseTagCondition(value: string): TagCondition | undefined {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  TAG.lastIndex = 0;
  while (TAG.lastIndex < value.length) {
    const at = TAG.lastIndex;
    const match = TAG.exec(value);
    if (!match) {
      // Empty list elements (`"a", , "b"`) are allowed by the list syntax (RFC 9110 5.6.1).
      const rest = value.slice(at);
      const empty = /^\s*,/.exec(rest);
      if (!empty) return rest.trim() === '' ? (tags.length > 0 ? tags : undefined) : undefined;
      TAG.lastIndex = at + empty[0].length;
      continue;
    }
    tags.push({ opaque: match[2]!, weak: match[1] !== undefined });
  }
  return tags.length > 0 ? tags : undefined;
}

/** Strong comparison: both strong, same opaque part (If-Match). */
export const strongMatch = (a: EntityTag, b: EntityTag): boolean => !a.weak && !b.weak && a.opaque === b.opaque;

/** Weak comparison: same opaque part, weak or not (If-None-Match). */
export const weakMatch = (a: EntityTag, b: EntityTag): boolean => a.opaque === b.opaque;

/** Whether a condition holds a tag that matches `current` by `compare`; `*` matches any representation that exists. */
export function conditionMatches(condition: TagCondition, current: EntityTag | undefined, compare: (a: EntityTag, b: EntityTag) => boolean): boolean {
  if (current === undefined) return false;
  if (condition === '*') return true;
  return condition.some((tag) => compare(tag, current));
}

/** Whether a handler's version can be sent as the opaque part of a tag. */
export const isOpaqueTag = (opaque: string): boolean => OPAQUE.test(opaque);

/** The `ETag` field value of a strong tag. */
export const formatTag = (tag: EntityTag): string => (tag.weak ? `W/"${tag.opaque}"` : `"${tag.opaque}"`);
