import type { OpenApiDocument } from './document';
import { resolveRef } from './refs';

/**
 * Where the schema of one item of a sequential media type (a stream) is, as a
 * JSON pointer into the document: 3.2's `itemSchema`, else (3.0, 3.1) the
 * `items` of its `type: array` schema; undefined when it has neither.
 *
 * @example itemSchemaPointer(spec, '/paths/~1pets~1export/get/responses/200/content/application~1jsonl') // '/components/schemas/Pets/items'
 */
export function itemSchemaPointer(spec: OpenApiDocument, mediaPointer: string): string | undefined {
  const media = resolveRef(spec, { $ref: `#${mediaPointer}` }).node;
  if (media['itemSchema'] !== undefined) return `${mediaPointer}/itemSchema`;
  if (media['schema'] === undefined) return undefined;
  // The array schema may be a $ref: its items are found where it points.
  const { node: schema, ref } = resolveRef(spec, media['schema']);
  const type = schema['type'];
  const isArray = type === 'array' || (Array.isArray(type) && type.includes('array'));
  if (!isArray || schema['items'] === null || typeof schema['items'] !== 'object') return undefined;
  return `${ref ? ref.replace(/^#/, '') : `${mediaPointer}/schema`}/items`;
}

/**
 * The most items a stream may hold, as its media type's `schema` says: the
 * `maxItems` of its array schema (3.0, 3.1, and 3.2 beside `itemSchema`);
 * undefined when it says nothing.
 *
 * @example streamMaxItems(spec, '/paths/~1pets~1import/post/requestBody/content/application~1jsonl') // 500
 */
export function streamMaxItems(spec: OpenApiDocument, mediaPointer: string): number | undefined {
  const media = resolveRef(spec, { $ref: `#${mediaPointer}` }).node;
  if (media['schema'] === undefined) return undefined;
  const maxItems = resolveRef(spec, media['schema']).node['maxItems'];
  return typeof maxItems === 'number' && Number.isInteger(maxItems) && maxItems >= 0 ? maxItems : undefined;
}

/** The fields of a Server-Sent Event an item schema may describe. */
const EVENT_FIELDS = new Set(['data', 'event', 'id', 'retry']);

/**
 * Whether the item schema of a Server-Sent Events stream (resolved) describes
 * each event's fields (as OpenAPI 3.2 does: `{data, event, id, retry}`),
 * rather than the data it carries (as some documents do): every property it
 * names is an event field. A schema of the data that happens to have an `id`
 * (`{id, title}`) describes the data. The request and response sides, and
 * the contract fuzzer, read items by this rule.
 *
 * @example describesEventFields({ type: 'object', properties: { data: {}, event: {} } }) // true
 */
export function describesEventFields(itemSchema: unknown): boolean {
  const properties = (itemSchema as { properties?: unknown } | null | undefined)?.properties;
  if (properties === null || typeof properties !== 'object') return false;
  const names = Object.keys(properties);
  return names.length > 0 && names.every((name) => EVENT_FIELDS.has(name));
}
