import type { OpenApiDocument } from '../contract/document';
import { essence, mediaKind } from '../contract/media-types';
import { resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import { formPairs, fromQuery, parseJson, refuseLongArray, setOwn, shapeOf, take, type Parameter } from './styles';

/** The fields of a form body (`application/x-www-form-urlencoded`, `multipart/form-data`), read by the schema and `encoding` of its media type. */
export interface FormFields {
  /** A URL-encoded body as an object: each property by its encoding's `style`/`explode` (form, exploded by default), coerced to its schema types. */
  fromUrlEncoded(text: string): Record<string, unknown>;
  /**
   * A multipart body, as multer read it: its text fields coerced (or parsed as
   * JSON where the part is JSON: an object property by default, or an
   * `encoding.contentType` that says so), and its files as `File`s. The body
   * to validate holds an empty string where a file is (the validator checks
   * the schema of a binary string, not its bytes); `uploads` holds the files,
   * put in its place once the body is valid.
   */
  fromMultipart(
    fields: Record<string, unknown>,
    files: ReadonlyArray<{ fieldname: string; originalname: string; mimetype: string; buffer: Buffer }>,
  ): { body: Record<string, unknown>; uploads: Map<string, File[]> };
}

interface Field {
  parameter: Parameter;
  /** A part of JSON text (multipart). */
  json: boolean;
  /** A binary string: sent as a file (multipart). */
  binary: boolean;
  /** An array of those. */
  many: boolean;
}

/** @example formFields(spec, '/paths/~1pets/post/requestBody', 'multipart/form-data').fromMultipart(req.body, req.files) */
export function formFields(spec: OpenApiDocument, requestBodyPointer: string, mediaType: string): FormFields {
  const media = resolveRef(spec, { $ref: `#${requestBodyPointer}/content/${mediaType.replace(/~/g, '~0').replace(/\//g, '~1')}` }).node;
  const schema = resolveRef(spec, media['schema'] ?? {}).node;
  const encoding = (media['encoding'] as Record<string, { contentType?: string; style?: string; explode?: boolean }> | undefined) ?? {};
  const multipart = mediaKind(mediaType) === 'multipart';
  const fields = new Map<string, Field>();
  for (const [name, raw] of Object.entries(propertiesOf(spec, schema))) {
    const property = resolveRef(spec, raw).node;
    const rule = encoding[name] ?? {};
    const style = rule.style ?? 'form';
    const shape = shapeOf(spec, property);
    const items = shape.kind === 'array' ? resolveRef(spec, property['items'] ?? {}).node : property;
    const binary = isBinary(items);
    const objectPart = shape.kind === 'object' || (shape.kind === 'array' && shapeOf(spec, items).kind === 'object');
    // A JSON part: said by the encoding's contentType (in a form too, as OpenAPI 3.1.1 reads it), or an object part of a multipart body.
    const json = rule.contentType !== undefined ? mediaKind(essence(rule.contentType.split(',')[0]!)) === 'json' : multipart && objectPart;
    fields.set(name, {
      parameter: { name, in: 'body', required: false, style, explode: rule.explode ?? style === 'form', pointer: undefined, json, shape, default: undefined },
      json,
      binary,
      many: shape.kind === 'array',
    });
  }

  return {
    fromUrlEncoded(text) {
      const pairs = formPairs(text, 'body');
      const body: Record<string, unknown> = {};
      const claimed = new Set<string>();
      for (const { parameter } of fields.values()) {
        const value = fromQuery(parameter, pairs);
        if (value === undefined) continue;
        take(body, parameter, value);
        claimed.add(parameter.name);
        if (parameter.shape.kind === 'object') for (const property of Object.keys(value as object)) claimed.add(property);
      }
      // What the schema does not name is kept as sent: its additionalProperties decide.
      const names = [...fields.keys()];
      for (const [name, value] of pairs) {
        if (claimed.has(name) || names.some((field) => name.startsWith(`${field}[`))) continue;
        take(
          body,
          {
            name,
            in: 'body',
            required: false,
            style: 'form',
            explode: true,
            pointer: undefined,
            json: false,
            shape: { kind: 'primitive', types: [] },
            default: undefined,
          },
          value,
        );
      }
      return body;
    },

    fromMultipart(sent, files) {
      const body: Record<string, unknown> = {};
      // multer builds the fields on null-prototype objects, where `__proto__` is an ordinary name: it stays one here.
      for (const [name, value] of Object.entries(sent)) {
        const field = fields.get(name);
        if (!field) {
          setOwn(body, name, value);
          continue;
        }
        if (Array.isArray(value) && field.parameter.shape.kind === 'array') refuseLongArray(value.length, field.parameter.shape.maxItems, `body.${name}`);
        const texts = Array.isArray(value) ? value.map(String) : [String(value)];
        if (field.json) {
          const parsed = texts.map((text) => parseJson(text, `body.${name}`));
          setOwn(body, name, field.many && !Array.isArray(parsed[0]) ? parsed : parsed[0]);
        } else {
          take(body, field.parameter, field.many ? texts : texts.length > 1 ? texts : texts[0]);
        }
      }
      const uploads = new Map<string, File[]>();
      for (const file of files) {
        const field = fields.get(file.fieldname);
        if (field && !field.binary) throw new ApiError(400, 'invalid_request', `body.${file.fieldname} must be sent as a text part, not a file`);
        const list = uploads.get(file.fieldname) ?? [];
        list.push(new File([file.buffer], file.originalname, { type: file.mimetype }));
        uploads.set(file.fieldname, list);
      }
      for (const [name, list] of uploads) setOwn(body, name, fields.get(name)?.many || list.length > 1 ? list.map(() => '') : '');
      return { body, uploads };
    },
  };
}

/** The properties of an object schema, those of its `allOf` members included. */
function propertiesOf(spec: OpenApiDocument, schema: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const own = { ...((schema['properties'] as Record<string, unknown> | undefined) ?? {}) };
  if (depth < 8 && Array.isArray(schema['allOf'])) {
    for (const member of schema['allOf']) Object.assign(own, propertiesOf(spec, resolveRef(spec, member).node, depth + 1));
  }
  return own;
}

/** A string of bytes: `format: binary` (3.0), or `contentMediaType`/`contentEncoding` (3.1), or no type at all. */
function isBinary(schema: Record<string, unknown>): boolean {
  return (
    schema['format'] === 'binary' ||
    schema['contentMediaType'] !== undefined ||
    schema['contentEncoding'] === 'binary' ||
    (schema['type'] === undefined && Object.keys(schema).length === 0)
  );
}

/** The files of a multipart body in place of their empty-string stand-ins, once the body is valid. */
export function withUploads(body: unknown, uploads: Map<string, File[]> | undefined): unknown {
  if (!uploads || uploads.size === 0 || body === null || typeof body !== 'object') return body;
  const merged = { ...(body as Record<string, unknown>) };
  for (const [name, files] of uploads) setOwn(merged, name, Array.isArray(merged[name]) ? files : files[0]);
  return merged;
}
