import type { Request } from 'express';
import type { OpenApiDocument } from '../contract/document';
import { resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';

/**
 * Parameter serialization as OpenAPI defines it (`style` and `explode`), read
 * back: the shared half of the parameters phase (path, query, header,
 * cookie) and of form bodies (whose fields follow the same rules through
 * their `encoding`).
 */

/** Where a value is, for messages: `params`, `query`, `headers`, `cookies`, or `body` (a form field). */
export type ValueLocation = 'path' | 'query' | 'querystring' | 'header' | 'cookie' | 'body';

/** One declared parameter (or form field), as it is read. */
export interface Parameter {
  name: string;
  in: ValueLocation;
  required: boolean;
  style: string;
  explode: boolean;
  /** JSON pointer of its schema in the document (for the validator). */
  pointer: string | undefined;
  /** `content: {application/json: ...}` instead of a schema: the value is JSON text. */
  json: boolean;
  shape: Shape;
  default: unknown;
}

/** What a parameter's schema says its value is: how to deserialize it and coerce its text. */
export type Shape =
  | { kind: 'primitive'; types: readonly string[] }
  | { kind: 'array'; items: readonly string[]; maxItems: number }
  | { kind: 'object'; properties: Readonly<Record<string, readonly string[]>>; additional: readonly string[] };

/** The message prefix of each location, as the request validator names them. */
export const PREFIX: Record<ValueLocation, string> = {
  path: 'params',
  query: 'query',
  querystring: 'querystring',
  header: 'headers',
  cookie: 'cookies',
  body: 'body',
};

/** OpenAPI: a header parameter with one of these names is ignored (the HTTP machinery owns them). */
export const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/**
 * The most items an array read from a request may hold when its schema sets
 * no `maxItems`: an array is refused on its length, before any walk over its
 * items, so its cost is bounded by what the contract allows.
 */
export const MAX_ARRAY_ITEMS = 1000;

const DECIMAL_INTEGER = /^-?\d+$/;
const DECIMAL_NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/** With the u flag a surrogate pair is one code point, so this matches only unpaired halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The types a schema admits (`type`, 3.1 type arrays, 3.0 `nullable`), looking through `allOf`/`oneOf`/`anyOf`. */
export function typesOf(spec: OpenApiDocument, raw: unknown, depth = 0): string[] {
  const schema = resolveRef(spec, raw).node;
  const declared = schema['type'];
  if (typeof declared === 'string') return schema['nullable'] === true ? [declared, 'null'] : [declared];
  if (Array.isArray(declared)) return declared.map(String);
  if (depth > 8) return [];
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const parts = schema[key];
    if (Array.isArray(parts)) {
      const types = [...new Set(parts.flatMap((part) => typesOf(spec, part, depth + 1)))];
      if (types.length > 0) return types;
    }
  }
  if (schema['properties'] !== undefined) return ['object'];
  if (schema['items'] !== undefined) return ['array'];
  return [];
}

export function shapeOf(spec: OpenApiDocument, schema: Record<string, unknown>): Shape {
  const types = typesOf(spec, schema);
  const resolved = resolveRef(spec, schema).node;
  if (types.includes('array')) {
    const maxItems = resolved['maxItems'];
    return {
      kind: 'array',
      items: resolved['items'] === undefined ? [] : typesOf(spec, resolved['items']),
      maxItems: typeof maxItems === 'number' && Number.isInteger(maxItems) && maxItems >= 0 ? Math.min(maxItems, MAX_ARRAY_ITEMS) : MAX_ARRAY_ITEMS,
    };
  }
  if (types.includes('object')) {
    const properties: Record<string, string[]> = {};
    for (const [name, property] of Object.entries((resolved['properties'] as Record<string, unknown> | undefined) ?? {}))
      properties[name] = typesOf(spec, property);
    const additional = resolved['additionalProperties'];
    return { kind: 'object', properties, additional: typeof additional === 'object' && additional !== null ? typesOf(spec, additional) : [] };
  }
  return { kind: 'primitive', types };
}

/** A request value that could not even be read as text: refused before any schema is consulted. */
export const unreadable = (where: string, why: string): ApiError => new ApiError(400, 'invalid_request', `${where} ${why}`);

export function decode(text: string, where: () => string, plusIsSpace: boolean): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(plusIsSpace ? text.replace(/\+/g, ' ') : text);
  } catch {
    throw unreadable(where(), 'is not valid percent-encoded UTF-8');
  }
  return decoded;
}

/** `a=1&b=2&b=3` as decoded pairs, in order (`+` is a space, as in forms); names in messages under `prefix`. */
export function formPairs(text: string, prefix: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const rawName = equals === -1 ? part : part.slice(0, equals);
    const name = decode(rawName, () => `${prefix}.${rawName}`, true);
    pairs.push([name, equals === -1 ? '' : decode(part.slice(equals + 1), () => `${prefix}.${name}`, true)]);
  }
  return pairs;
}

/** The query string's pairs. */
export function queryPairs(req: Request): Array<[string, string]> {
  const url = req.originalUrl;
  const start = url.indexOf('?');
  return start === -1 ? [] : formPairs(url.slice(start + 1), 'query');
}

/** Absent (`undefined`) or the deserialized value of one query parameter. */
export function fromQuery(parameter: Parameter, pairs: Array<[string, string]>): unknown {
  const { name, shape } = parameter;
  if (parameter.style === 'deepObject') {
    const found = pairs.filter(([key]) => key.startsWith(`${name}[`));
    if (found.length === 0) return undefined;
    const object: Record<string, unknown> = {};
    for (const [key, value] of found) {
      const property = /^[^[]+\[([^\]]*)\]$/.exec(key)?.[1];
      if (property === undefined || property === '') throw unreadable(`${PREFIX[parameter.in]}.${key}`, 'is not of the form name[property]');
      if (Object.hasOwn(object, property)) throw unreadable(`${PREFIX[parameter.in]}.${key}`, 'must be given at most once');
      setOwn(object, property, value);
    }
    return object;
  }
  if (shape.kind === 'object' && parameter.explode && parameter.style === 'form' && !parameter.json) {
    const object: Record<string, unknown> = {};
    const names = Object.keys(shape.properties);
    const open = names.length === 0 || shape.additional.length > 0;
    for (const [key, value] of pairs) {
      if (!(names.includes(key) || (open && key !== name))) continue;
      if (Object.hasOwn(object, key)) throw unreadable(`${PREFIX[parameter.in]}.${key}`, 'must be given at most once');
      setOwn(object, key, value);
    }
    return Object.keys(object).length === 0 ? undefined : object;
  }
  const values = pairs.filter(([key]) => key === name).map(([, value]) => value);
  if (values.length === 0) return undefined;
  if (shape.kind === 'array' && parameter.explode && !parameter.json) return values;
  if (values.length > 1) throw unreadable(`${PREFIX[parameter.in]}.${name}`, 'must be given at most once');
  const text = values[0]!;
  if (parameter.json) return parseJson(text, `${PREFIX[parameter.in]}.${name}`);
  const delimiter = parameter.style === 'spaceDelimited' ? ' ' : parameter.style === 'pipeDelimited' ? '|' : ',';
  if (shape.kind === 'array') return text === '' ? [] : text.split(delimiter);
  if (shape.kind === 'object') return pairsToObject(text.split(delimiter), `${PREFIX[parameter.in]}.${name}`);
  return text;
}

/** A path segment by its style: `simple` (`5`, `3,4,5`, `R,1,G,2` / `R=1,G=2`), `label` (`.5`, `.3.4.5`), `matrix` (`;id=5`, `;id=3;id=4`). */
export function fromPath(parameter: Parameter, raw: string, req: Request): unknown {
  const where = (): string => `path ${req.path}`;
  const { name, style, explode, shape } = parameter;
  if (parameter.json) return parseJson(decode(raw, where, false), `params.${name}`);
  if (style === 'label') {
    if (!raw.startsWith('.')) throw unreadable(`params.${name}`, 'must start with "." (label style)');
    const body = raw.slice(1);
    const parts = explode ? body.split('.') : body.split(shape.kind === 'primitive' ? /(?!)/ : ',');
    return structure(
      parameter,
      parts.map((part) => decode(part, where, false)),
      explode,
    );
  }
  if (style === 'matrix') {
    const prefix = `;${name}`;
    if (shape.kind === 'object' && explode) {
      const parts = raw.split(';').slice(1);
      return structure(
        parameter,
        parts.map((part) => decode(part, where, false)),
        true,
      );
    }
    const parts = raw.split(';').slice(1);
    if (raw !== prefix && !raw.startsWith(`${prefix}=`)) throw unreadable(`params.${name}`, `must be written ${prefix}=value (matrix style)`);
    const values = parts.map((part) => decode(part.includes('=') ? part.slice(part.indexOf('=') + 1) : '', where, false));
    if (shape.kind === 'array' && explode) return values;
    const text = values[0] ?? '';
    return structure(parameter, shape.kind === 'primitive' ? [text] : text === '' ? [] : text.split(','), false);
  }
  return structure(parameter, shape.kind === 'primitive' ? [decode(raw, where, false)] : raw.split(',').map((part) => decode(part, where, false)), explode);
}

/** `simple` style text (headers; path parameters go through `fromPath`). */
export function deserializeSimple(parameter: Parameter, text: string, delimiter: string): unknown {
  if (parameter.json) return parseJson(text, `headers.${parameter.name}`);
  const { shape } = parameter;
  if (shape.kind === 'primitive') return text;
  const parts = text === '' ? [] : text.split(delimiter).map((part) => part.trim());
  return structure(parameter, parts, parameter.explode);
}

/** The value of a cookie parameter: `form` style (`id=3,4,5`; exploded: `id=3; id=4`, an object's properties as cookies of their own). */
export function fromCookies(parameter: Parameter, cookies: Array<[string, string]>): unknown {
  const { name, shape, explode } = parameter;
  if (shape.kind === 'object' && explode && !parameter.json) {
    const object: Record<string, unknown> = {};
    for (const [key, value] of cookies) if (Object.hasOwn(shape.properties, key)) setOwn(object, key, value);
    return Object.keys(object).length === 0 ? undefined : object;
  }
  const values = cookies.filter(([key]) => key === name).map(([, value]) => value);
  if (values.length === 0) return undefined;
  if (shape.kind === 'array' && explode && !parameter.json) return values;
  if (values.length > 1) throw unreadable(`cookies.${name}`, 'must be given at most once');
  if (parameter.json) return parseJson(values[0]!, `cookies.${name}`);
  if (shape.kind === 'array') return values[0] === '' ? [] : values[0]!.split(',');
  if (shape.kind === 'object') return pairsToObject(values[0]!.split(','), `cookies.${name}`);
  return values[0];
}

/** Parts as the parameter's shape: a primitive (one part), an array, or an object (`k,v,k,v`, or exploded `k=v`). */
export function structure(parameter: Parameter, parts: string[], explode: boolean): unknown {
  const { shape } = parameter;
  if (shape.kind === 'primitive') return parts.join(',');
  if (shape.kind === 'array') return parts;
  if (explode) {
    const object: Record<string, string> = {};
    for (const part of parts) {
      const equals = part.indexOf('=');
      if (equals === -1) throw unreadable(`${PREFIX[parameter.in]}.${parameter.name}`, 'must list name=value pairs');
      setOwn(object, part.slice(0, equals), part.slice(equals + 1));
    }
    return object;
  }
  return pairsToObject(parts, `${PREFIX[parameter.in]}.${parameter.name}`);
}

export function pairsToObject(parts: string[], where: string): Record<string, string> {
  // `name=` with nothing after it: the empty object (OpenAPI writes an empty value so).
  if (parts.length === 1 && parts[0] === '') return {};
  if (parts.length % 2 !== 0) throw unreadable(where, 'must list name,value pairs');
  const object: Record<string, string> = {};
  for (let index = 0; index < parts.length; index += 2) setOwn(object, parts[index]!, parts[index + 1]!);
  return object;
}

export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unreadable(where, 'is not valid JSON');
  }
}

/**
 * Stores a deserialized value (coerced) under its name; absent values are
 * left for `check`. An array longer than its schema's `maxItems` (or
 * MAX_ARRAY_ITEMS) is refused before its items are walked.
 */
export function take(into: Record<string, unknown>, parameter: Parameter, value: unknown): void {
  if (value === undefined) return;
  const where = `${PREFIX[parameter.in]}.${parameter.name}`;
  if (parameter.shape.kind === 'array' && Array.isArray(value)) refuseLongArray(value.length, parameter.shape.maxItems, where);
  refuseUnsafeText(value, where);
  setOwn(into, parameter.name, parameter.json ? value : coerce(parameter, value, where));
}

/** 400 for an array of more than `maxItems` items, in the words Ajv uses for `maxItems`. */
export function refuseLongArray(length: number, maxItems: number, where: string): void {
  if (length > maxItems) {
    const why = maxItems === MAX_ARRAY_ITEMS ? ` (the server's cap for an array whose schema sets no lower maxItems)` : '';
    throw new ApiError(400, 'invalid_request', `${where} must NOT have more than ${maxItems} items${why}`);
  }
}

/**
 * Sets an own, enumerable property, as `JSON.parse` does: a name sent by a
 * client (`__proto__`, `constructor`) is a plain key, never the object's
 * prototype. Assignment is kept for every other name (the common, fast path).
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

export function refuseUnsafeText(value: unknown, where: string): void {
  const check = (text: string): void => {
    if (text.includes('\0')) throw unreadable(where, 'must not contain the NUL character (%00)');
    if (LONE_SURROGATE.test(text)) throw unreadable(where, 'must not contain unpaired UTF-16 surrogates');
  };
  if (typeof value === 'string') check(value);
  else if (Array.isArray(value)) for (const item of value) refuseUnsafeText(item, where);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      check(key);
      refuseUnsafeText(item, where);
    }
  }
}

export function coerce(parameter: Parameter, value: unknown, where: string): unknown {
  const { shape } = parameter;
  if (shape.kind === 'primitive') return coerceText(value, shape.types, where);
  if (shape.kind === 'array') return (value as unknown[]).map((item, index) => coerceText(item, shape.items, `${where}.${index}`));
  const object = value as Record<string, unknown>;
  const coerced: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(object)) {
    setOwn(coerced, key, coerceText(item, (Object.hasOwn(shape.properties, key) ? shape.properties[key] : undefined) ?? shape.additional, `${where}.${key}`));
  }
  return coerced;
}

/**
 * Text as the first of `types` it can be read as exactly; otherwise left as
 * text, for the schema to refuse with its own message (`must be integer`).
 * Text the request validator's coercion would read as a number although it
 * is not written in decimal digits (` 5`, `0x10`, `Infinity`) is refused
 * here, so the validator never passes a value the handler receives as text.
 */
export function coerceText(value: unknown, types: readonly string[], where: string): unknown {
  if (typeof value !== 'string') return value;
  const textAllowed = types.includes('string');
  for (const type of types) {
    if (type === 'integer') {
      if (DECIMAL_INTEGER.test(value)) return Number(value);
      const number = Number(value);
      // JavaScript reads `1e3`, `0x10`, ` 5` and `1.0` as integers, and `1e999` as Infinity: the contract's integers are decimal digits.
      if (value !== '' && !Number.isNaN(number) && (!Number.isFinite(number) || Number.isInteger(number))) {
        throw new ApiError(400, 'invalid_request', `${where} must be an integer written in decimal digits`);
      }
    } else if (type === 'number') {
      if (DECIMAL_NUMBER.test(value) && Number.isFinite(Number(value))) return Number(value);
      if (!textAllowed && value !== '' && !Number.isNaN(Number(value))) {
        throw new ApiError(400, 'invalid_request', `${where} must be a number written in decimal digits`);
      }
    } else if (type === 'boolean') {
      if (value === 'true' || value === 'false') return value === 'true';
    } else if (type === 'null') {
      // An empty value is null where text is not allowed, as the validator's coercion reads it.
      if (value === 'null' || (value === '' && !textAllowed)) return null;
    } else if (type === 'string') {
      return value;
    }
  }
  return value;
}
