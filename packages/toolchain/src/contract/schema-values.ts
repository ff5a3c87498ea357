/**
 * Values from JSON Schemas: fast-check arbitraries for random valid values,
 * the edges of every constraint (valid), and each constraint broken in turn
 * (invalid). Supports the keywords an OpenAPI contract uses for data:
 * type, enum, const, minimum/maximum (and exclusive), minLength/maxLength,
 * items/minItems/maxItems, properties/required/additionalProperties.
 */
import fc from 'fast-check';
import type { Schema } from './spec';

/** A value with a few words saying what makes it interesting. */
export interface LabelledValue {
  label: string;
  value: unknown;
}

/** The schema's type: the first non-null of a type array, else what its keywords imply. */
const typeOf = (schema: Schema): string | undefined => {
  const declared = Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type;
  return declared ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
};

/**
 * The schema as one plain schema for making values: `allOf` merged (types,
 * properties, required), the first of `oneOf` / `anyOf`. Values made from
 * it are checked by the server against the whole schema.
 */
function plain(schema: Schema, depth = 0): Schema {
  if (depth > 8) return schema;
  const { allOf, oneOf, anyOf, ...rest } = schema as Schema & { allOf?: Schema[]; oneOf?: Schema[]; anyOf?: Schema[] };
  let merged: Schema = rest;
  for (const part of allOf ?? []) {
    const flat = plain(part, depth + 1);
    merged = {
      ...flat,
      ...merged,
      ...((flat.properties || merged.properties) && { properties: { ...flat.properties, ...merged.properties } }),
      ...((flat.required || merged.required) && { required: [...new Set([...(flat.required ?? []), ...(merged.required ?? [])])] }),
    };
  }
  const choice = (oneOf ?? anyOf)?.[0];
  return choice ? plain({ ...merged, ...plain(choice, depth + 1) }, depth + 1) : merged;
}

/** Values of the formats servers check (ajv-formats'), for strings whose format decides what is valid. */
const FORMAT_SAMPLES: Record<string, string> = {
  email: 'someone@example.com',
  'idn-email': 'someone@example.com',
  uri: 'https://example.com/a',
  url: 'https://example.com/a',
  'uri-reference': '/a',
  iri: 'https://example.com/a',
  'date-time': '2026-01-02T03:04:05Z',
  date: '2026-01-02',
  time: '03:04:05Z',
  uuid: '8e03978e-40d5-43e8-bc93-6894a57f9324',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  byte: 'aGVsbG8=',
  duration: 'P1D',
  regex: '^a$',
  'json-pointer': '/a',
};
const formatSample = (schema: Schema): string | undefined => (typeof schema.format === 'string' ? FORMAT_SAMPLES[schema.format] : undefined);

/** JSON Schema patterns are ECMA-262 regexes, unanchored, over code points (ajv's `u` flag). */
const patternOf = (schema: Schema): RegExp | undefined => (typeof schema['pattern'] === 'string' ? new RegExp(schema['pattern'] as string, 'u') : undefined);

/** Whether a string satisfies the schema's length and pattern (lengths in code points). */
function stringFits(schema: Schema, text: string): boolean {
  const length = [...text].length;
  return length >= (schema.minLength ?? 0) && length <= (schema.maxLength ?? Infinity) && (patternOf(schema)?.test(text) ?? true);
}

/**
 * Whether `fetch` sends `text` as a header value unchanged: visible ASCII with
 * inner spaces or tabs. fetch refuses NUL, CR and LF, refuses what is not a
 * byte, and strips leading and trailing whitespace (which would send another
 * value than the case meant); control and non-ASCII bytes are left out too,
 * since servers read them differently.
 *
 * @example sendableAsHeader('8e03978e-40d5') // true
 * @example sendableAsHeader('a\u0000b')     // false
 */
export const sendableAsHeader = (text: string): boolean => /^(?:[\x21-\x7E](?:[\x20\t\x21-\x7E]*[\x21-\x7E])?)?$/.test(text);

/** `text` with every code point that a header cannot carry as is replaced by `x` (lengths in code points are kept). */
const toSendable = (text: string): string => [...text].map((char) => (/^[\x21-\x7E]$/.test(char) ? char : 'x')).join('');

/** Valid strings a server often mishandles: quotes, backslash, control and separator characters, non-BMP. */
const AWKWARD_STRINGS = ['"\\\'<>&\u0001\u001f\u2028é\u{1F43E}', 'a\u0000b', 'a\uD800b', ' ', 'null'];

/** Inclusive integer bounds of a schema (exclusive bounds tightened), clamped to safe integers. */
function integerBounds(schema: Schema): { min: number; max: number } {
  const min = schema.exclusiveMinimum !== undefined ? Math.floor(schema.exclusiveMinimum) + 1 : (schema.minimum ?? -1_000_000);
  const max = schema.exclusiveMaximum !== undefined ? Math.ceil(schema.exclusiveMaximum) - 1 : (schema.maximum ?? 1_000_000);
  return { min: Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER), max: Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER) };
}

/**
 * A fast-check arbitrary of values valid against `schema`. Objects get each
 * optional property present or absent, never unknown properties.
 *
 * @example fc.sample(arbitraryFor({ type: 'integer', minimum: 1, maximum: 100 }), { seed: 1, numRuns: 3 })
 */
export function arbitraryFor(given: Schema): fc.Arbitrary<unknown> {
  const schema = plain(given);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (typeOf(schema)) {
    case 'integer': {
      const { min, max } = integerBounds(schema);
      // fc.integer stops at 32 bits; ids go up to 2^53-1.
      return fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);
    }
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string': {
      const formatted = formatSample(schema);
      if (formatted !== undefined) return fc.constant(formatted);
      const pattern = patternOf(schema);
      // fast-check generates from the regex itself; lengths are then filtered.
      if (pattern) return fc.stringMatching(pattern, { size: 'small' }).filter((text) => stringFits(schema, text));
      // 'binary' is any code point, one per unit, so lengths match JSON Schema's (code points).
      return fc.string({ unit: 'binary', minLength: schema.minLength ?? 0, maxLength: schema.maxLength ?? 100 });
    }
    case 'array':
      return fc.array(arbitraryFor(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, Math.max(schema.minItems ?? 0, 5)),
      });
    case 'object': {
      const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, sub]) => [name, arbitraryFor(sub)]));
      return fc.record(properties, { requiredKeys: (schema.required ?? []).filter((name) => name in properties) });
    }
    default:
      return fc.constant(schema.default ?? null);
  }
}

/**
 * Like `arbitraryFor`, for a header parameter: only values `fetch` can send
 * unchanged (`sendableAsHeader`). Free text is repaired (the characters a
 * header cannot carry become `x`) and kept when still valid; enum and const
 * values are kept when sendable.
 *
 * @example fc.sample(headerArbitraryFor({ type: 'string', minLength: 1, maxLength: 255 }), { seed: 1, numRuns: 3 })
 */
export function headerArbitraryFor(schema: Schema): fc.Arbitrary<unknown> {
  const sendable = (value: unknown): boolean => typeof value !== 'string' || sendableAsHeader(value);
  if (schema.const !== undefined || schema.enum || typeOf(schema) !== 'string') return arbitraryFor(schema).filter(sendable);
  return arbitraryFor(schema)
    .map((value) => (typeof value === 'string' ? toSendable(value) : value))
    .filter((value) => sendable(value) && (typeof value !== 'string' || stringFits(schema, value)));
}

/**
 * The simplest valid value: an example, else the lower bound; objects carry
 * only their required properties (so defaults stay omitted).
 *
 * @example baseValue({ type: 'object', required: ['name'], properties: { name: { type: 'string', examples: ['Rex'] } } }) // { name: 'Rex' }
 */
export function baseValue(given: Schema): unknown {
  const schema = plain(given);
  if (schema.const !== undefined) return schema.const;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  switch (typeOf(schema)) {
    case 'integer':
    case 'number': {
      const { min, max } = integerBounds(schema);
      return Math.min(Math.max(1, min), max);
    }
    case 'boolean':
      return true;
    case 'string': {
      const formatted = formatSample(schema);
      if (formatted !== undefined) return formatted;
      const simple = 'a'.repeat(Math.max(schema.minLength ?? 0, 1)).slice(0, schema.maxLength ?? Infinity);
      return stringFits(schema, simple) ? simple : fc.sample(arbitraryFor(schema), { seed: 0, numRuns: 1 })[0];
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => baseValue(schema.items ?? {}));
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name) => [name, baseValue(schema.properties?.[name] ?? {})]));
    default:
      return null;
  }
}

/**
 * Valid values on the edges of the schema's constraints: both bounds, the
 * shortest and the longest string (the longest also in astral characters,
 * which count one per code point), every enum value.
 *
 * @example edgeValues({ type: 'integer', minimum: 1, maximum: 100 }) // [{ label: 'minimum 1', value: 1 }, { label: 'maximum 100', value: 100 }]
 */
export function edgeValues(given: Schema): LabelledValue[] {
  const schema = plain(given);
  if (schema.const !== undefined) return [{ label: 'const', value: schema.const }];
  if (schema.enum) return schema.enum.map((value) => ({ label: `enum value ${JSON.stringify(value)}`, value }));
  switch (typeOf(schema)) {
    case 'integer':
    case 'number': {
      const { min, max } = integerBounds(schema);
      const edges: LabelledValue[] = [];
      if (schema.minimum !== undefined || schema.exclusiveMinimum !== undefined) edges.push({ label: `minimum ${min}`, value: min });
      if (schema.maximum !== undefined || schema.exclusiveMaximum !== undefined) edges.push({ label: `maximum ${max}`, value: max });
      return edges;
    }
    case 'boolean':
      return [true, false].map((value) => ({ label: String(value), value }));
    case 'string': {
      // A format decides what is valid: its sample is the edge.
      if (formatSample(schema) !== undefined) return [{ label: `format ${schema.format}`, value: formatSample(schema) }];
      const edges: LabelledValue[] = [{ label: `minLength ${schema.minLength ?? 0}`, value: 'a'.repeat(schema.minLength ?? 0) }];
      if (schema.maxLength !== undefined) {
        edges.push({ label: `maxLength ${schema.maxLength}`, value: 'x'.repeat(schema.maxLength) });
        edges.push({ label: `maxLength ${schema.maxLength} in astral characters`, value: '\u{1F43E}'.repeat(schema.maxLength) });
      }
      for (const text of AWKWARD_STRINGS) edges.push({ label: `awkward characters ${JSON.stringify(text)}`, value: text });
      return edges.filter((edge) => stringFits(schema, edge.value as string));
    }
    default:
      return [];
  }
}

/**
 * Invalid values, one per broken constraint: wrong type, below minimum, above
 * maximum, too short, too long, not in the enum; for objects also each required
 * property missing, an unknown property (when `additionalProperties: false`)
 * and each property's own violations. `asText` drops violations a text
 * parameter cannot express (a query string is always a string); `header`
 * keeps only values a header can carry (`sendableAsHeader`), so that what is
 * refused is the value, not the request.
 *
 * @example violations({ type: 'integer', minimum: 1 }).map((v) => v.label) // ['wrong type (string)', 'not an integer', 'below minimum 1']
 */
export function violations(schema: Schema, options: { asText?: boolean; header?: boolean } = {}): LabelledValue[] {
  const found = violationsOf(schema, options);
  return options.header ? found.filter(({ value }) => typeof value !== 'string' || sendableAsHeader(value)) : found;
}

function violationsOf(given: Schema, options: { asText?: boolean; header?: boolean }): LabelledValue[] {
  const schema = plain(given);
  const found: LabelledValue[] = [];
  const type = typeOf(schema);
  if (schema.enum) {
    found.push({ label: 'not in the enum', value: type === 'integer' ? 987654321 : 'not-in-enum-value' });
    if (type === 'string' && !options.asText) found.push({ label: 'wrong type (number)', value: 1 });
    return found;
  }
  switch (type) {
    case 'integer':
    case 'number': {
      found.push({ label: 'wrong type (string)', value: options.asText ? 'abc' : String(baseValue(schema)) });
      if (type === 'integer') found.push({ label: 'not an integer', value: 1.5 });
      if (schema.minimum !== undefined) found.push({ label: `below minimum ${schema.minimum}`, value: schema.minimum - 1 });
      if (schema.exclusiveMinimum !== undefined) found.push({ label: `not above exclusiveMinimum ${schema.exclusiveMinimum}`, value: schema.exclusiveMinimum });
      // maximum + 1 is exact up to 2^53 (the next double after 2^53-1).
      if (schema.maximum !== undefined) found.push({ label: `above maximum ${schema.maximum}`, value: schema.maximum + 1 });
      if (schema.exclusiveMaximum !== undefined) found.push({ label: `not below exclusiveMaximum ${schema.exclusiveMaximum}`, value: schema.exclusiveMaximum });
      break;
    }
    case 'boolean':
      found.push({ label: 'wrong type (string)', value: options.asText ? 'maybe' : 'true' });
      break;
    case 'string':
      if (!options.asText) found.push({ label: 'wrong type (number)', value: 1 });
      if (schema.minLength) found.push({ label: `shorter than minLength ${schema.minLength}`, value: 'a'.repeat(schema.minLength - 1) });
      if (schema.maxLength !== undefined) found.push({ label: `longer than maxLength ${schema.maxLength}`, value: 'x'.repeat(schema.maxLength + 1) });
      if (patternOf(schema)) {
        // Strings of an allowed length that break the pattern, if one of these does.
        const breaking = ['a\u0000b', 'a\uD800b', ' ', '!', 'a b', '0', 'x'.repeat(Math.max(schema.minLength ?? 1, 1))].find(
          (text) => !patternOf(schema)!.test(text) && stringFits({ ...schema, pattern: undefined }, text) && (!options.header || sendableAsHeader(text)),
        );
        if (breaking !== undefined) found.push({ label: `not matching pattern ${schema['pattern'] as string}: ${JSON.stringify(breaking)}`, value: breaking });
      }
      break;
    case 'array':
      // In text (a query, a path, a header) an object's fields read as items: no wrong type to send.
      if (!options.asText) found.push({ label: 'wrong type (object)', value: {} });
      break;
    case 'object': {
      const base = baseValue(schema) as Record<string, unknown>;
      // In text (a query, a path, a header) an array's items read as an object's fields: no wrong type to send.
      if (!options.asText) found.push({ label: 'wrong type (array)', value: [base] });
      for (const name of schema.required ?? []) {
        const { [name]: _dropped, ...rest } = base;
        found.push({ label: `required property ${name} missing`, value: rest });
      }
      if (schema.additionalProperties === false) {
        found.push({ label: 'unknown property (additionalProperties: false)', value: { ...base, unexpectedProperty: 1 } });
      }
      for (const [name, sub] of Object.entries(schema.properties ?? {})) {
        for (const violation of violations(sub, options)) {
          found.push({ label: `${name}: ${violation.label}`, value: { ...base, [name]: violation.value } });
        }
      }
      break;
    }
  }
  return found;
}
