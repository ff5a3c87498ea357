import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { listOperations } from '../contract/document';
import { mediaKind } from '../contract/media-types';
import { deref, escapePointer, resolveRef } from '../contract/refs';

/**
 * A collection path and its item path, as the stateful mock pairs them:
 * `/notes` and `/notes/{noteId}`, or `/boards/{boardId}/cards` and
 * `/boards/{boardId}/cards/{cardId}`.
 */
export interface ResourcePair {
  /** The collection's path template (`/boards/{boardId}/cards`). */
  readonly collection: string;
  /** The path parameters of the collection path, which name one collection among its siblings (`boardId`). */
  readonly parents: readonly string[];
  /** The item path's last parameter (`cardId`). */
  readonly parameter: string;
  /** The item property that holds the id (`cardId` when the item has it, else `id`). */
  readonly idProperty: string;
  /** How the mock makes ids: a counter, its decimal text, or a UUID, as the id property's schema asks. */
  readonly idKind: 'integer' | 'string' | 'uuid';
}

/** What an operation of a pair does to it. */
export type Role = 'create' | 'list' | 'read' | 'update' | 'replace' | 'remove';

/** One JSON response of an operation: where it is and how its body holds the item (or the list). */
export interface JsonResponse {
  readonly status: number;
  readonly mediaType: string;
  /** The pointer of its schema, for the response validator. */
  readonly schemaPointer: string;
  readonly schema: Record<string, unknown>;
  /** The one property that wraps the item (`{ article: {...} }`), when the schema is such an envelope; of a list, the property that holds its array (`items`), undefined for a bare array. */
  readonly envelope: string | undefined;
}

/** An operation of a pair, with the responses the stateful mock answers it with. */
export interface PairedOperation {
  readonly role: Role;
  readonly pair: ResourcePair;
  /** The status of success: `create` 201 when declared, `remove` 204 when declared, else the lowest 2xx. */
  readonly success: number;
  /** The success response's JSON body, when it has one. */
  readonly json: JsonResponse | undefined;
  /**
   * The success response's declared headers, lower case: those it requires
   * (sent with their examples), and `location` when declared. Optional ones
   * tell of a state the store does not have (a next page, a replay): left out.
   */
  readonly headers: { readonly required: ReadonlySet<string>; readonly location: boolean };
  /** The schema items are stored by: the JSON success response of the collection's POST, else of the item's GET. */
  readonly stored: JsonResponse;
  /** The query parameters of a `list`. */
  readonly query: readonly string[];
}

const ROLES: Readonly<Record<string, Role>> = {
  'collection post': 'create',
  'collection get': 'list',
  'item get': 'read',
  'item patch': 'update',
  'item put': 'replace',
  'item delete': 'remove',
};

type Node = Record<string, unknown>;

/**
 * The operations the stateful mock keeps state for, by operationId. The rule:
 * an item path is a path whose last segment is one whole path parameter
 * (`/notes/{noteId}`); its collection path is the same path without that
 * segment (`/notes`). The two are paired when both are in the document, the
 * collection has a POST (the only way an item comes to exist), and the item
 * (the JSON body of the POST's success, else of the item GET's) has a
 * property named like the parameter, else `id`: the id the mock writes.
 * Then POST and GET on the collection, GET, PATCH, PUT and DELETE on the item
 * are paired; every other operation is not (the caller answers it as the
 * example mock does).
 *
 * @example resourcePairs(spec).get('getNote')?.role // 'read'
 */
export function resourcePairs(spec: OpenApiDocument): Map<string, PairedOperation> {
  const operations = listOperations(spec);
  const byPath = new Map<string, Map<string, SpecOperation>>();
  for (const op of operations) {
    const methods = byPath.get(op.path) ?? new Map<string, SpecOperation>();
    methods.set(op.method, op);
    byPath.set(op.path, methods);
  }
  const paired = new Map<string, PairedOperation>();
  for (const [itemPath, itemOps] of byPath) {
    const last = /\/\{([^{}/]+)\}$/.exec(itemPath);
    if (!last) continue;
    const collection = itemPath.slice(0, last.index) || '/';
    const collectionOps = byPath.get(collection);
    const create = collectionOps?.get('post');
    if (!collectionOps || !create) continue;
    const parameter = last[1]!;
    const stored = jsonSuccess(spec, create, 'post', parameter) ?? (itemOps.get('get') && jsonSuccess(spec, itemOps.get('get')!, 'get', parameter));
    if (!stored) continue;
    const properties = propertiesOf(spec, itemSchema(spec, stored));
    const idProperty = properties.has(parameter) ? parameter : properties.has('id') ? 'id' : undefined;
    if (idProperty === undefined) continue;
    const pair: ResourcePair = {
      collection,
      parents: [...collection.matchAll(/\{([^{}/]+)\}/g)].map((match) => match[1]!),
      parameter,
      idProperty,
      idKind: idKindOf(spec, properties.get(idProperty)!),
    };
    for (const [where, ops] of [
      ['collection', collectionOps],
      ['item', itemOps],
    ] as const) {
      for (const [method, op] of ops) {
        const role = ROLES[`${where} ${method}`];
        if (role === undefined) continue;
        const success = successStatus(op, role);
        if (success === undefined) continue;
        const query = role === 'list' ? queryParameters(spec, op) : [];
        const json = jsonResponse(spec, op, success, idProperty, role);
        paired.set(op.operationId, { role, pair, success, json, headers: declaredHeaders(spec, op, success), stored, query });
      }
    }
  }
  return paired;
}

/** The item schema inside a response schema (the envelope's property, or the schema itself). */
export function itemSchema(spec: OpenApiDocument, response: JsonResponse): Node {
  if (response.envelope === undefined) return response.schema;
  return deref(spec, propertiesOf(spec, response.schema).get(response.envelope));
}

/**
 * The properties a schema gives its objects, through `$ref`s and `allOf`
 * (the two ways documents compose an item), each resolved.
 */
export function propertiesOf(spec: OpenApiDocument, schema: unknown, depth = 0): Map<string, Node> {
  const found = new Map<string, Node>();
  const node = deref(spec, schema);
  if (depth > 16) return found;
  for (const member of (node['allOf'] as unknown[] | undefined) ?? [])
    for (const [name, property] of propertiesOf(spec, member, depth + 1)) found.set(name, property);
  for (const [name, property] of Object.entries((node['properties'] as Record<string, unknown> | undefined) ?? {})) found.set(name, deref(spec, property));
  return found;
}

/** The declared success of a role: 201 for a create and 204 for a remove when declared, else the lowest 2xx. */
function successStatus(op: SpecOperation, role: Role): number | undefined {
  const statuses = Object.keys((op.operation['responses'] ?? {}) as Node)
    .filter((status) => /^2\d\d$/.test(status))
    .sort();
  const preferred = role === 'create' ? '201' : role === 'remove' ? '204' : undefined;
  const status = preferred !== undefined && statuses.includes(preferred) ? preferred : statuses[0];
  return status === undefined ? undefined : Number(status);
}

/** The headers a response declares: the required ones, and whether `Location` is one. */
function declaredHeaders(spec: OpenApiDocument, op: SpecOperation, status: number): PairedOperation['headers'] {
  const response = deref(spec, ((op.operation['responses'] ?? {}) as Node)[String(status)]);
  const headers = Object.entries((response['headers'] ?? {}) as Node).map(([name, header]) => [name.toLowerCase(), deref(spec, header)] as const);
  return {
    required: new Set(headers.filter(([, header]) => header['required'] === true).map(([name]) => name)),
    location: headers.some(([name]) => name === 'location'),
  };
}

/** The JSON body of an operation's success response, when it declares one with a schema. */
function jsonResponse(spec: OpenApiDocument, op: SpecOperation, status: number, idProperty: string, role: Role): JsonResponse | undefined {
  const raw = ((op.operation['responses'] ?? {}) as Node)[String(status)];
  if (raw === undefined) return undefined;
  const { node: response, ref } = resolveRef(spec, raw);
  const content = (response['content'] ?? {}) as Record<string, Node>;
  const mediaType = Object.keys(content).find((type) => mediaKind(type) === 'json' && content[type]!['schema'] !== undefined);
  if (mediaType === undefined) return undefined;
  const schema = deref(spec, content[mediaType]!['schema']);
  const pointer = `${ref ? ref.slice(1) : `${op.pointer}/responses/${status}`}/content/${escapePointer(mediaType)}/schema`;
  const envelope = role === 'list' ? listProperty(spec, schema) : envelopeOf(spec, schema, idProperty);
  // A list that is neither an array nor an object holding one cannot carry the items.
  if (envelope === null) return undefined;
  return { status, mediaType, schemaPointer: pointer, schema, envelope };
}

function jsonSuccess(spec: OpenApiDocument, op: SpecOperation, method: 'post' | 'get', parameter: string): JsonResponse | undefined {
  const status = successStatus(op, method === 'post' ? 'create' : 'read');
  if (status === undefined) return undefined;
  // An envelope is found by the id property inside it, so the parameter's name is tried first, then `id`.
  const byParameter = jsonResponse(spec, op, status, parameter, 'read');
  if (!byParameter || propertiesOf(spec, itemSchema(spec, byParameter)).has(parameter)) return byParameter;
  return jsonResponse(spec, op, status, 'id', 'read');
}

/**
 * The property that wraps the item when the schema is an envelope: an object
 * without the id property whose one property is an object that has it
 * (`{ article: { slug, ... } }`).
 */
function envelopeOf(spec: OpenApiDocument, schema: Node, idProperty: string): string | undefined {
  const properties = propertiesOf(spec, schema);
  if (properties.has(idProperty) || properties.size !== 1) return undefined;
  const [name, inner] = [...properties][0]!;
  return propertiesOf(spec, inner).has(idProperty) ? name : undefined;
}

/** The array property of a list answered as an object (`{ items: [...] }`, `{ data: [...], total }`); undefined for a bare array, null for neither. */
function listProperty(spec: OpenApiDocument, schema: Node): string | undefined | null {
  if (schema['type'] === 'array' || schema['items'] !== undefined) return undefined;
  for (const [name, property] of propertiesOf(spec, schema)) if (property['type'] === 'array' || property['items'] !== undefined) return name;
  return null;
}

/** The names of an operation's query parameters (its own and its path item's). */
function queryParameters(spec: OpenApiDocument, op: SpecOperation): string[] {
  const all = [...((op.pathItem['parameters'] as unknown[] | undefined) ?? []), ...((op.operation['parameters'] as unknown[] | undefined) ?? [])];
  return all.map((parameter) => deref(spec, parameter)).flatMap((parameter) => (parameter['in'] === 'query' ? [String(parameter['name'])] : []));
}

/** An integer or number property counts; a `uuid` string gets UUIDs; any other string the counter's text. */
function idKindOf(spec: OpenApiDocument, property: Node): ResourcePair['idKind'] {
  const type = deref(spec, property)['type'];
  const types = Array.isArray(type) ? type : [type];
  if (types.includes('integer') || types.includes('number')) return 'integer';
  return property['format'] === 'uuid' ? 'uuid' : 'string';
}
