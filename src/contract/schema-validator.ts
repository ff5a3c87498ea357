import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from './load-spec';
import { int32Format, int64Format } from './formats';

/** Validates a value against the schema at a JSON pointer of the contract. */
export interface SchemaValidator {
  /** Undefined when `value` is valid, else Ajv's explanation, e.g. `data/status must be equal to one of the allowed values`. */
  explain(pointer: string, value: unknown): string | undefined;
}

/**
 * JSON Schema 2020-12 (OpenAPI 3.1's dialect) validation of values against
 * schemas of the contract, addressed by JSON pointer so their `$ref`s resolve
 * in place; formats as the request validator checks them.
 *
 * @example schemaValidator(spec).explain('/components/schemas/Pet', { id: 1 }) // "data must have required property 'name'"
 */
export function schemaValidator(spec: OpenApiDocument): SchemaValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int64', int64Format);
  ajv.addFormat('int32', int32Format);
  ajv.addSchema(structuredClone(spec) as object, 'openapi');
  const compiled = new Map<string, ValidateFunction>();
  return {
    explain(pointer, value) {
      let validate = compiled.get(pointer);
      if (!validate) {
        validate = ajv.compile({ $ref: `openapi#${encodeURI(pointer)}` });
        compiled.set(pointer, validate);
      }
      return validate(value) ? undefined : ajv.errorsText(validate.errors);
    },
  };
}
