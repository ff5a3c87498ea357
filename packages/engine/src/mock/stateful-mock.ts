import { sample } from 'openapi-sampler';
import type { OpenApiDocument } from '../contract/document';
import { essence } from '../contract/media-types';
import { schemaValidator, type SchemaValidator } from '../contract/schemas';
import { ApiError } from '../errors/api-error';
import type { Preconditions } from '../conditions/preconditions';
import { ItemStore } from './item-store';
import { applyMergePatch, isObject } from './merge-patch';
import type { MockResponse, OperationMock } from './mock-responses';
import { itemSchema, propertiesOf, resourcePairs, type JsonResponse, type PairedOperation } from './resource-pairs';

/** What the stateful mock reads of a request, once the pipeline has validated it. */
export interface MockRequest {
  params: Readonly<Record<string, unknown>>;
  query: Readonly<Record<string, unknown>>;
  body: unknown;
  /** The declared request media type the body was sent as (`application/merge-patch+json`). */
  mediaType: string | undefined;
  /** The request's path, which a created item's `Location` is made from. */
  path: string;
  /** Its `If-Match` / `If-None-Match`: checked against the stored item's version before it changes. */
  conditions: Preconditions;
}

/** One paired operation of the stateful mock. */
export interface StatefulOperation {
  /**
   * The answer from the store: undefined when the mock cannot make one the
   * contract accepts (the caller answers the example instead). Throws a 404
   * ApiError for an id the store does not hold, a 400 for a change that would
   * leave the item breaking its schema.
   */
  answer(request: MockRequest): MockResponse | undefined;
}

type Item = Record<string, unknown>;

/** A query parameter that pages instead of filtering. */
const PAGING = new Set(['limit', 'offset']);
/** The integer property of a list envelope that tells how many items match (`total`, `count`, `articlesCount`; not `discount`). */
const COUNT_PROPERTY = /^(total|count|totalCount|total_count)$|[a-z]Count$/;

/**
 * The stateful mock of one document: the paired operations (the rule:
 * resource-pairs.ts) answered from one in-memory store. A create stores the
 * body over a sample of the item's schema with a new id; reads, lists,
 * patches (JSON Merge Patch for `application/merge-patch+json`, else a
 * shallow merge), replacements and removals work on what is stored. Every
 * answer but the 404 of an id not held (the engine's, like an unknown
 * path's) is a declared status whose body is checked against its schema.
 *
 * @example const mocks = buildStatefulMocks(spec, buildOperationMocks(spec, ids)); mocks.get('createNote')?.answer(request)
 */
export function buildStatefulMocks(
  spec: OpenApiDocument,
  examples: ReadonlyMap<string, OperationMock>,
  store = new ItemStore(),
): Map<string, StatefulOperation> {
  const validator = schemaValidator(spec, { direction: 'response', allErrors: true });
  const mocks = new Map<string, StatefulOperation>();
  for (const [operationId, paired] of resourcePairs(spec)) {
    const answers = new Answers(spec, validator, store, paired, examples.get(operationId));
    mocks.set(operationId, { answer: (request) => answers.answer(request) });
  }
  return mocks;
}

/** The answers of one paired operation. */
class Answers {
  private readonly properties: Map<string, Record<string, unknown>>;

  constructor(
    private readonly spec: OpenApiDocument,
    private readonly validator: SchemaValidator,
    private readonly store: ItemStore,
    private readonly op: PairedOperation,
    private readonly example: OperationMock | undefined,
  ) {
    this.properties = propertiesOf(spec, itemSchema(spec, op.stored));
  }

  answer(request: MockRequest): MockResponse | undefined {
    const { pair } = this.op;
    const collection = this.store.collectionKey(pair, request.params);
    if (this.op.role === 'create') return this.create(collection, request);
    if (this.op.role === 'list') return this.list(collection, request.query);
    const id = String(request.params[pair.parameter]);
    const current = this.store.get(collection, id);
    if (!current) throw new ApiError(404, 'not_found', `${request.path} does not exist`);
    // The stored version is the item's ETag: a write whose If-Match names another is a 412, and nothing changes.
    if (this.op.role !== 'read') request.conditions.check(String(current.version));
    switch (this.op.role) {
      case 'read':
        return this.versioned(this.success(current.value), current.version);
      case 'remove': {
        const answer = this.success(current.value);
        if (answer) this.store.delete(collection, id);
        return answer;
      }
      case 'update': {
        const patch = this.unwrap(request.body);
        const merged =
          request.mediaType !== undefined && essence(request.mediaType) === 'application/merge-patch+json'
            ? applyMergePatch(current.value, patch)
            : isObject(patch)
              ? { ...current.value, ...patch }
              : patch;
        return this.change(collection, id, merged, current.value);
      }
      case 'replace': {
        // Made as a create makes an item, under the same id: what the client cannot send (readOnly properties) comes from the sample again.
        const body = this.unwrap(request.body);
        const base = this.sampleItem();
        return this.change(collection, id, isObject(body) && base ? { ...base, ...body } : body, current.value);
      }
    }
  }

  /** Stores a new item: the body over a sample, with a new id; undefined (the example is answered) when that breaks the item's schema. */
  private create(collection: string, request: MockRequest): MockResponse | undefined {
    const body = this.unwrap(request.body);
    const base = this.sampleItem();
    if (!isObject(body) || base === undefined) return undefined;
    const { pair } = this.op;
    const id = this.store.nextId(pair);
    const item = this.withoutWriteOnly({ ...base, ...body, [pair.idProperty]: id });
    if (this.itemProblem(item) !== undefined) return undefined;
    const answer = this.success(item, `${request.path.replace(/\/+$/, '')}/${encodeURIComponent(String(id))}`);
    return answer && this.versioned(answer, this.store.put(collection, String(id), item).version);
  }

  /** The stored items that match the query's filters (a parameter named like an item property), paged by `limit` and `offset` when declared. */
  private list(collection: string, query: Readonly<Record<string, unknown>>): MockResponse | undefined {
    const filters = this.op.query.filter((name) => this.properties.has(name) && query[name] !== undefined && !PAGING.has(name));
    const matching = this.store
      .list(collection)
      .map((stored) => stored.value)
      .filter((item) => filters.every((name) => matches(item[name], query[name])));
    const offset = this.op.query.includes('offset') && typeof query['offset'] === 'number' ? query['offset'] : 0;
    const limit = this.op.query.includes('limit') && typeof query['limit'] === 'number' ? query['limit'] : matching.length;
    const page = matching.slice(offset, offset + limit);
    const json = this.op.json;
    if (!json) return undefined;
    if (json.envelope === undefined) return this.respond(page);
    const wrapper = sample(json.schema, { quiet: true, skipWriteOnly: true }, this.spec);
    if (!isObject(wrapper)) return undefined;
    const counts = [...propertiesOf(this.spec, json.schema)].filter(([name, schema]) => COUNT_PROPERTY.test(name) && schema['type'] === 'integer');
    return this.respond({ ...wrapper, ...Object.fromEntries(counts.map(([name]) => [name, matching.length])), [json.envelope]: page });
  }

  /** Stores a changed item (its id unchanged) and answers it; a change that breaks the item's schema is refused with a 400. */
  private change(collection: string, id: string, changed: unknown, current: Readonly<Item>): MockResponse | undefined {
    if (!isObject(changed)) throw new ApiError(400, 'invalid_request', 'body must leave the item an object');
    const { idProperty } = this.op.pair;
    const item = this.withoutWriteOnly({ ...changed, [idProperty]: current[idProperty] });
    const problem = this.itemProblem(item);
    // Said as a request validation error would be: the body is what makes the item break its schema.
    if (problem !== undefined) throw new ApiError(400, 'invalid_request', `the item this body makes is not valid: ${problem.replace(/^data/, 'item')}`);
    const answer = this.success(item);
    return answer && this.versioned(answer, this.store.put(collection, id, item).version);
  }

  /** An answer with the item's version as its ETag. */
  private versioned(answer: MockResponse | undefined, version: number): MockResponse | undefined {
    return answer && { ...answer, etag: String(version) };
  }

  /** The declared success of the operation with `item` as its body (when it has a JSON one), `Location` set where declared. */
  private success(item: Readonly<Item>, location?: string): MockResponse | undefined {
    const json = this.op.json;
    const body = json === undefined ? undefined : json.envelope === undefined ? item : { [json.envelope]: item };
    return this.respond(body, location);
  }

  /** The answer of the operation's success status: its declared headers' examples, `body` when it fits its schema. */
  private respond(body: unknown, location?: string): MockResponse | undefined {
    const { success, json } = this.op;
    let example: MockResponse | undefined;
    try {
      example = this.example?.answer(`code=${success}`, json?.mediaType);
    } catch {
      example = undefined;
    }
    if (!example) return undefined;
    const headers = this.headers(example.headers, location);
    if (json === undefined) return { ...example, headers };
    if (this.problem(json, body) !== undefined) return undefined;
    return { status: success, headers, mediaType: json.mediaType, body };
  }

  /** The examples of the required declared headers, and `Location` (where declared) set to the created item's URL. */
  private headers(examples: Readonly<Record<string, string>>, location: string | undefined): Record<string, string> {
    const { required, location: declared } = this.op.headers;
    const headers = Object.fromEntries(Object.entries(examples).filter(([name]) => required.has(name.toLowerCase())));
    if (location !== undefined && declared) headers['Location'] = location;
    return headers;
  }

  /** What makes `item`, in the envelope items are stored by, break its schema; undefined when it fits. */
  private itemProblem(item: Readonly<Item>): string | undefined {
    const { envelope } = this.op.stored;
    return this.problem(this.op.stored, envelope === undefined ? item : { [envelope]: item });
  }

  /** What makes a body break a response's schema; undefined when it fits. */
  private problem(response: JsonResponse, body: unknown): string | undefined {
    return this.validator.explain(response.schemaPointer, body);
  }

  /** A sample of the item's schema (its envelope taken off), from openapi-sampler as the example mock makes them. */
  private sampleItem(): Item | undefined {
    const stored = this.op.stored;
    const whole = sample(stored.schema, { quiet: true, skipWriteOnly: true }, this.spec);
    const item = stored.envelope === undefined ? whole : isObject(whole) ? whole[stored.envelope] : undefined;
    return isObject(item) ? item : undefined;
  }

  /** A body sent in the item's envelope (`{ article: {...} }`) without it. */
  private unwrap(body: unknown): unknown {
    const envelope = this.op.stored.envelope;
    if (envelope === undefined || !isObject(body)) return body;
    const keys = Object.keys(body);
    return keys.length === 1 && keys[0] === envelope ? body[envelope] : body;
  }

  /** The item without the properties only requests carry (a password), which no response may show. */
  private withoutWriteOnly(item: Item): Item {
    return Object.fromEntries(Object.entries(item).filter(([name]) => this.properties.get(name)?.['writeOnly'] !== true));
  }
}

/** Whether an item's value matches a filter's: equal as text, one of several, or held by an array value. */
function matches(value: unknown, filter: unknown): boolean {
  if (Array.isArray(filter)) return filter.some((one) => matches(value, one));
  if (Array.isArray(value)) return value.some((one) => matches(one, filter));
  return value !== undefined && value !== null && typeof value !== 'object' && String(value) === String(filter);
}
