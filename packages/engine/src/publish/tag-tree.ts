import { OPENAPI_32_METHODS, type OpenApiDocument } from '../contract/document';

interface Tag {
  name: string;
  summary?: string;
  description?: string;
  parent?: string;
  [key: string]: unknown;
}

/** How a tag under a parent is named in the /docs navigation: its ancestors first. */
export const TAG_PATH_SEPARATOR = ' › ';

/**
 * The tag tree of an OpenAPI 3.2 document (tags with `parent`) as /docs shows
 * it. Swagger UI lists tags at one level, so in the copy /docs reads, each
 * tag is named by its path from the root (`books › search`), every tag
 * follows its parent, and a tag with a `summary` but no `description` shows
 * the summary. Operations name their tags by those paths. The published
 * document (`/openapi/vN.yaml`) is not touched; a document without parents is
 * returned as it is.
 *
 * @example withTagTree(spec).tags?.map((tag) => tag.name) // ['books', 'books › search']
 */
export function withTagTree(spec: OpenApiDocument): OpenApiDocument {
  const tags = (Array.isArray(spec['tags']) ? spec['tags'] : []) as Tag[];
  if (!tags.some((tag) => typeof tag.parent === 'string')) return spec;
  const byName = new Map(tags.map((tag) => [tag.name, tag]));
  const pathOf = (tag: Tag, seen = new Set<string>()): string[] => {
    const parent = typeof tag.parent === 'string' ? byName.get(tag.parent) : undefined;
    // A parent that is not declared, or a cycle (which Redocly's spec rules refuse), ends the path.
    if (!parent || seen.has(tag.name)) return [tag.name];
    seen.add(tag.name);
    return [...pathOf(parent, seen), tag.name];
  };
  const shownName = new Map(tags.map((tag) => [tag.name, pathOf(tag).join(TAG_PATH_SEPARATOR)]));
  const ordered = [...tags].sort((a, b) => compareTagPaths(pathOf(a), pathOf(b), tags));
  const shownTags = ordered.map(({ parent: _parent, ...tag }) => ({
    ...tag,
    name: shownName.get(tag.name)!,
    ...(tag.description === undefined && typeof tag.summary === 'string' && { description: tag.summary }),
  }));
  const renamed = (operation: unknown): unknown => {
    const named = (operation as { tags?: unknown } | null)?.tags;
    if (!Array.isArray(named)) return operation;
    return { ...(operation as object), tags: named.map((name) => (typeof name === 'string' ? (shownName.get(name) ?? name) : name)) };
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [template, item] of Object.entries(spec.paths)) {
    const copy: Record<string, unknown> = { ...(item as object) };
    for (const method of OPENAPI_32_METHODS) if (copy[method] !== undefined) copy[method] = renamed(copy[method]);
    const additional = copy['additionalOperations'] as Record<string, unknown> | undefined;
    if (additional && typeof additional === 'object')
      copy['additionalOperations'] = Object.fromEntries(Object.entries(additional).map(([method, operation]) => [method, renamed(operation)]));
    paths[template] = copy;
  }
  return { ...spec, tags: shownTags, paths };
}

/** Depth first, siblings in the order the document declares them. */
function compareTagPaths(a: string[], b: string[], declared: readonly Tag[]): number {
  const position = (name: string) => declared.findIndex((tag) => tag.name === name);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return position(a[i]!) - position(b[i]!);
  }
  return a.length - b.length;
}
