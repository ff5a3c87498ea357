import Ajv2020 from 'ajv/dist/2020';
import AjvDraft04 from 'ajv-draft-04';
import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from './document';
import { int32Format, int64Format } from './formats';
import { lookupRef } from './refs';

/**
 * Which way a value travels. OpenAPI: a `readOnly` property may be sent only
 * in responses, a `writeOnly` one only in requests; `required` applies to a
 * property only in the direction it may travel.
 */
export type Direction = 'request' | 'response';

/** Validates values against schemas of the document, addressed by JSON pointer so their `$ref`s resolve in place. */
export interface SchemaValidator {
  /** The compiled validator of the schema at `pointer` (compiled once, at the first call). */
  compile(pointer: string): ValidateFunction;
  /** Undefined when `value` is valid, else Ajv's explanation, e.g. `data/status must be equal to one of the allowed values`. */
  explain(pointer: string, value: unknown): string | undefined;
}

export interface SchemaOptions {
  direction: Direction;
  /** Fill in `default`s of absent properties (request validation). */
  useDefaults?: boolean;
  /** Report every error rather than the first. */
  allErrors?: boolean;
}

/**
 * JSON Schema validation of the document's schemas in its own dialect:
 * OpenAPI 3.0's (draft 4, `nullable`, boolean `exclusiveMinimum`) or 3.1's
 * (2020-12, type arrays, `const`, `unevaluatedProperties`). Formats are
 * checked as the request validator checks them (ajv-formats, `int32`,
 * `int64` as a safe integer); a format nobody defines is ignored, as JSON
 * Schema says. `readOnly`/`writeOnly` follow the direction: such a property
 * is not required the other way, and is refused there when present.
 *
 * @example schemaValidator(spec, { direction: 'response' }).explain('/components/schemas/Pet', { id: 1 }) // "data must have required property 'name'"
 */
export function schemaValidator(spec: OpenApiDocument, options: SchemaOptions): SchemaValidator {
  const ajv = newAjv(spec, options);
  ajv.addSchema(directed(spec, options.direction) as object, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  const compile = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      // The many places that only reference one schema (every response of an Error) share its validator.
      const target = referencedSchema(spec, pointer);
      validate = compiled.get(target);
      if (!validate) {
        validate = ajv.compile({ $ref: `openapi#${encodeURI(target)}` });
        compiled.set(target, validate);
      }
      compiled.set(pointer, validate);
    }
    return validate;
  };
  return {
    compile,
    explain(pointer, value) {
      const validate = compile(pointer);
      return validate(value) ? undefined : ajv.errorsText(validate.errors);
    },
  };
}

/**
 * Where the schema at `pointer` is, when it is nothing but a local `$ref`
 * (`{ $ref: '#/components/schemas/Pet' }`): the pointer it refers to,
 * followed to the end; else `pointer` itself. Validating against either is
 * the same.
 *
 * @example referencedSchema(spec, '/paths/~1pets~1{petId}/get/responses/200/content/application~1json/schema') // '/components/schemas/Pet'
 */
function referencedSchema(spec: OpenApiDocument, pointer: string): string {
  let current = pointer;
  for (let hops = 0; hops < 64; hops++) {
    let node: unknown;
    try {
      node = lookupRef(spec, `#${current}`);
    } catch {
      return current;
    }
    if (node === null || typeof node !== 'object' || Object.keys(node).length !== 1) return current;
    const ref = (node as { $ref?: unknown }).$ref;
    // Percent-encoded pointers are left to Ajv, which decodes them.
    if (typeof ref !== 'string' || !ref.startsWith('#/') || ref.includes('%')) return current;
    current = ref.slice(1);
  }
  return current;
}

/** Whether the document is OpenAPI 3.0 (JSON Schema draft 4 plus `nullable`) rather than 3.1. */
export const isOpenApi30 = (spec: OpenApiDocument): boolean => spec.openapi.startsWith('3.0');

function newAjv(spec: OpenApiDocument, options: SchemaOptions): Ajv {
  const settings = {
    strict: false,
    validateSchema: false,
    allErrors: options.allErrors ?? false,
    useDefaults: options.useDefaults ?? false,
    logger: false as const,
  };
  const ajv: Ajv = isOpenApi30(spec) ? (new AjvDraft04(settings) as unknown as Ajv) : (new Ajv2020(settings) as unknown as Ajv);
  addFormats(ajv);
  ajv.addFormat('int64', int64Format);
  ajv.addFormat('int32', int32Format);
  for (const format of formatsIn(spec)) if (!ajv.formats[format]) ajv.addFormat(format, true);
  const refused = options.direction === 'request' ? 'readOnly' : 'writeOnly';
  ajv.removeKeyword(refused);
  ajv.addKeyword({
    keyword: refused,
    schemaType: 'boolean',
    errors: true,
    validate: function check(this: unknown, flag: boolean, _data: unknown, _schema: unknown, context?: { instancePath: string }) {
      if (!flag) return true;
      (check as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        {
          keyword: refused,
          instancePath: context?.instancePath ?? '',
          message: options.direction === 'request' ? 'is read-only' : 'is write-only',
          params: {},
        },
      ];
      return false;
    },
  });
  return ajv;
}

/** Every `format` value used in the document. */
export function formatsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) formatsIn(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string') found.add(value);
      else formatsIn(value, found);
    }
  }
  return found;
}

/**
 * A copy of the document in which no schema requires a property that cannot
 * travel in `direction` (`readOnly` ones in requests, `writeOnly` ones in
 * responses).
 */
function directed(spec: OpenApiDocument, direction: Direction): unknown {
  const flag = direction === 'request' ? 'readOnly' : 'writeOnly';
  const copy = structuredClone(spec) as unknown;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const schema = node as { properties?: Record<string, unknown>; required?: unknown };
    if (schema.properties && typeof schema.properties === 'object' && Array.isArray(schema.required)) {
      schema.required = schema.required.filter((name) => !flagged(spec, schema.properties![String(name)], flag));
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(copy);
  return copy;
}

function flagged(spec: OpenApiDocument, property: unknown, flag: string): boolean {
  let node = property as Record<string, unknown> | undefined;
  for (let hops = 0; node && typeof node['$ref'] === 'string' && hops < 16; hops++) {
    if (node[flag] === true) return true;
    try {
      node = lookupRef(spec, node['$ref'] as string);
    } catch {
      return false;
    }
  }
  return node?.[flag] === true;
}
