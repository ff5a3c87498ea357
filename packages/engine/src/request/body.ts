import express, { type Request, type RequestHandler } from 'express';
import { isUtf8 } from 'node:buffer';
import multer from 'multer';
import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { essence, mediaKind, selectDeclared } from '../contract/media-types';
import { resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import { fromMiddleware, type Stage } from '../stage/stage';
import { formFields } from './form-fields';
import { contextOf } from '../context/request-context';
import { escapePointer } from '../contract/refs';
import { describesEventFields, itemSchemaPointer, streamMaxItems } from '../contract/item-schema';
import type { SchemaValidator } from '../contract/schemas';
import { itemFormat, readItems, type ItemReading } from './items';

/** Largest body read, whatever its media type; a larger one gets 413 (also when sent chunked). */
export const MAX_BODY_BYTES = 1_048_576;
/** Files and fields of one multipart body. */
const MAX_PARTS = 100;
/**
 * A multipart field name's bracket levels (`a[b][c]` has 2). The engine reads
 * one level (`tags[]`, `tags[0]`, `meta[color]`); one more is left for fields
 * the schema does not name.
 */
const MAX_FIELD_NESTING = 2;
/**
 * The largest index in a multipart field name (`tags[99]`). A body holds at
 * most MAX_PARTS parts, so no array sent by index needs a larger one; without
 * a bound, `tags[50000000]` would build an array of that length for one part.
 */
const MAX_FIELD_ARRAY_INDEX = MAX_PARTS - 1;

/** An operation's request body as declared: its media types and whether it is required. */
export interface DeclaredBody {
  required: boolean;
  /** Every media type of `content`, in document order. */
  mediaTypes: string[];
  /** Those the engine parses (XML is refused when the contract is loaded). */
  served: string[];
  /** The pointer of `requestBody` in the document, for the encoding of form and multipart fields. */
  pointer: string;
}

/** The request body an operation declares, `undefined` when none. */
export function declaredBody(spec: OpenApiDocument, op: SpecOperation): DeclaredBody | undefined {
  const raw = op.operation['requestBody'];
  if (raw === undefined) return undefined;
  const { node, ref } = resolveRef(spec, raw);
  const content = (node['content'] as Record<string, unknown> | undefined) ?? {};
  const mediaTypes = Object.keys(content);
  return {
    required: node['required'] === true,
    mediaTypes,
    served: mediaTypes.filter((type) => mediaKind(type) !== 'xml'),
    pointer: ref ? ref.slice(1) : `${op.pointer}/requestBody`,
  };
}

/**
 * The body phase of one operation: reads the body in the media type its
 * Content-Type selects among those the operation declares (exact type
 * first, then the most specific range), never more than MAX_BODY_BYTES:
 *
 * - JSON (`application/json`, `+json`): valid UTF-8, and no string holding
 *   U+0000 or an unpaired surrogate (neither can be stored faithfully);
 * - `application/x-www-form-urlencoded` and `multipart/form-data`: fields
 *   deserialized by their `encoding` (style, explode, contentType) and
 *   coerced to their schema types; a multipart file is a `File`, held in
 *   memory within the same limit, never written to disk;
 * - `text/*`: a string;
 * - anything else (`application/octet-stream`, `image/png`, `*\/*`): the
 *   bytes, as a Blob of the type sent.
 *
 * A body of a media type the operation does not declare is a 415 before a
 * byte is read; a required body that is absent is a 400. Bodies of requests
 * refused earlier are never read: this phase runs after authentication and
 * the rate limits. An operation without a request body ignores one.
 *
 * @example stages.push(bodyStage(spec, op, { schemas: schemaValidator(spec, { direction: 'request' }), maxStreamBytes: 100 * 1_048_576, maxStreamItems: 10_000 }));
 */
export function bodyStage(spec: OpenApiDocument, op: SpecOperation, options: BodyOptions): Stage {
  const declared = declaredBody(spec, op);
  if (!declared) return () => undefined;
  const readers = new Map(declared.served.map((mediaType) => [mediaType, readerFor(spec, declared, mediaType, options)] as const));
  // A body of items is held to the stream limit as a whole (each item to MAX_BODY_BYTES); any other to MAX_BODY_BYTES.
  const limits = new Map(
    declared.mediaTypes.map((mediaType) => [mediaType, itemFormat(mediaType) === undefined ? MAX_BODY_BYTES : options.maxStreamBytes] as const),
  );
  const accepted = declared.served.join(', ');
  const onlyJson = declared.served.length === 1 && essence(declared.served[0]!) === 'application/json';

  return (req, res) => {
    if (!hasBody(req)) {
      if (!declared.required) return;
      throw new ApiError(
        400,
        'invalid_request',
        onlyJson ? 'body is required: send JSON with Content-Type: application/json' : `body is required: send it as ${accepted}`,
      );
    }
    const contentType = req.headers['content-type'];
    const declaredType = contentType === undefined ? undefined : selectDeclared(declared.mediaTypes, contentType);
    if (declaredType === undefined) {
      const sent = contentType === undefined ? 'none' : essence(contentType);
      throw new ApiError(
        415,
        'unsupported_media_type',
        onlyJson ? `Content-Type must be application/json, got ${sent}` : `Content-Type must be one of ${accepted}, got ${sent}`,
      );
    }
    const read = readers.get(declaredType);
    if (!read) {
      throw new ApiError(
        415,
        'unsupported_media_type',
        `${essence(declaredType)} bodies are declared but not served (XML is not supported)${accepted ? `: send ${accepted}` : ''}`,
      );
    }
    const sentAs = essence(contentType!);
    const limit = limits.get(declaredType)!;
    if (Number(req.headers['content-length']) > limit) throw limit === MAX_BODY_BYTES ? tooLarge() : streamTooLarge(limit);
    contextOf(req).received = { mediaType: declaredType, sentAs, kind: mediaKind(declaredType) };
    return read(req, res);
  };
}

const tooLarge = (): ApiError => new ApiError(413, 'payload_too_large', 'body must not be larger than 1 MiB (1,048,576 bytes)');

/** A body is announced by Transfer-Encoding or a Content-Length above 0 (an empty body is no body). */
export const hasBody = (req: Request): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

type Reader = (req: Request, res: Parameters<Stage>[1]) => Promise<void> | void;

export interface BodyOptions {
  /** The version's schemas in the request direction: each item of a streamed body is checked against its item schema. */
  schemas: SchemaValidator;
  /** The largest streamed body (JSON Lines, JSON text sequences) in all, in bytes; each item is held to MAX_BODY_BYTES. */
  maxStreamBytes: number;
  /** The most items a streamed body may hold when its schema sets no `maxItems`. */
  maxStreamItems: number;
}

const streamTooLarge = (limit: number): ApiError => new ApiError(413, 'payload_too_large', `body must not be larger than ${limit} bytes in all`);

/** Any media type: body-parser reads it whatever its Content-Type says (the phase chose the reader). */
const ANY = (): boolean => true;

const utf8Only = (_req: unknown, _res: unknown, buffer: Buffer, encoding: string): void => {
  if (encoding.toLowerCase() === 'utf-8' && !isUtf8(buffer)) throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
};

function readerFor(spec: OpenApiDocument, declared: DeclaredBody, mediaType: string, options: BodyOptions): Reader {
  const format = itemFormat(mediaType);
  if (format !== undefined) {
    // A stream of items: nothing is read here; the handler reads the items as it iterates (src/request/items.ts).
    const mediaPointer = `${declared.pointer}/content/${escapePointer(mediaType)}`;
    const pointer = itemSchemaPointer(spec, mediaPointer);
    const reading: ItemReading = {
      format,
      maxItemBytes: MAX_BODY_BYTES,
      maxTotalBytes: options.maxStreamBytes,
      maxItems: streamMaxItems(spec, mediaPointer) ?? options.maxStreamItems,
      check: pointer === undefined ? () => undefined : (item) => options.schemas.explain(pointer, item),
      refuseUnsafe: (item, where) => refuseUnsafeJson(item, where),
      ...(format === 'sse' && { eventFields: pointer !== undefined && describesEventFields(resolveRef(spec, { $ref: `#${pointer}` }).node) }),
    };
    return (req) => {
      // The admission phase, which runs after this one, puts the counter of the stream's weight in the context.
      req.body = readItems(req, reading, (items) => contextOf(req).streamItems?.(items));
    };
  }
  const kind = mediaKind(mediaType);
  switch (kind) {
    case 'json': {
      // Any JSON text, not only objects and arrays (body-parser's `strict`): a body whose schema is a string or a number is sent as one.
      const parse = fromMiddleware(express.json({ limit: MAX_BODY_BYTES, type: ANY, verify: utf8Only, strict: false }));
      return (req, res) => parse(req, res).then(() => refuseUnsafeJson(req.body));
    }
    case 'text': {
      const parse = fromMiddleware(express.text({ limit: MAX_BODY_BYTES, type: ANY, defaultCharset: 'utf-8', verify: utf8Only }));
      return (req, res) => parse(req, res);
    }
    case 'form': {
      const parse = fromMiddleware(express.text({ limit: MAX_BODY_BYTES, type: ANY, defaultCharset: 'utf-8', verify: utf8Only }));
      const fields = formFields(spec, declared.pointer, mediaType);
      return async (req, res) => {
        await parse(req, res);
        req.body = fields.fromUrlEncoded(typeof req.body === 'string' ? req.body : '');
      };
    }
    case 'multipart': {
      const limits = {
        fileSize: MAX_BODY_BYTES,
        fieldSize: MAX_BODY_BYTES,
        parts: MAX_PARTS,
        files: MAX_PARTS,
        fieldNestingDepth: MAX_FIELD_NESTING,
        fieldArrayIndexLimit: MAX_FIELD_ARRAY_INDEX,
      };
      const parse = fromMiddleware(limitBytes(multer({ limits }).any()));
      const fields = formFields(spec, declared.pointer, mediaType);
      return async (req, res) => {
        await parse(req, res).catch((error: unknown) => Promise.reject(multipartError(error)));
        const { body, uploads } = fields.fromMultipart((req.body ?? {}) as Record<string, unknown>, (req.files ?? []) as Express.Multer.File[]);
        req.body = body;
        contextOf(req).uploads = uploads;
      };
    }
    case 'binary':
    case 'xml': {
      const parse = fromMiddleware(express.raw({ limit: MAX_BODY_BYTES, type: ANY }));
      return async (req, res) => {
        await parse(req, res);
        req.body = new Blob([req.body as Buffer], { type: contextOf(req).received!.sentAs });
      };
    }
  }
}

/** Stops reading a body (multer has no total limit) once it passes MAX_BODY_BYTES. */
function limitBytes(parse: RequestHandler): RequestHandler {
  return (req, res, next) => {
    let received = 0;
    let refused = false;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > MAX_BODY_BYTES && !refused) {
        refused = true;
        req.unpipe();
        next(tooLarge());
      }
    };
    req.on('data', count);
    void parse(req, res, (error?: unknown) => {
      req.off('data', count);
      if (!refused) next(error);
    });
  };
}

/** multer's refusals as Error objects: a limit is a 413, a malformed body a 400. */
function multipartError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  if (error instanceof multer.MulterError) {
    if (/^LIMIT_(FILE_SIZE|FIELD_VALUE|PART_COUNT|FILE_COUNT|FIELD_COUNT)$/.test(error.code))
      return new ApiError(413, 'payload_too_large', `multipart body too large: ${error.message.toLowerCase()}`);
    // Codes multer 2.5 added, which its type definitions do not list yet.
    const code: string = error.code;
    if (code === 'LIMIT_FIELD_ARRAY_INDEX')
      return new ApiError(
        400,
        'invalid_request',
        `multipart body: the field name ${JSON.stringify(error.field)} has an array index above ${MAX_FIELD_ARRAY_INDEX}`,
      );
    if (code === 'LIMIT_FIELD_NESTING')
      return new ApiError(
        400,
        'invalid_request',
        `multipart body: the field name ${JSON.stringify(error.field)} nests more than ${MAX_FIELD_NESTING} levels of brackets`,
      );
    return new ApiError(400, 'invalid_request', `multipart body: ${error.message.toLowerCase()}`);
  }
  const message = (error as Error | undefined)?.message ?? '';
  if (/boundary|multipart|unexpected end/i.test(message)) return new ApiError(400, 'invalid_request', `multipart body is malformed: ${message}`);
  return error;
}

/** With the u flag a surrogate pair is one code point, so this matches only unpaired halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The deepest nesting of arrays and objects a JSON body (or one item of a
 * stream) may have: far beyond what any document's schemas describe, and
 * short of what would make every later walk over the value (the validator's,
 * a handler's, a serializer's) a risk.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * No string (value or property name) of a JSON body may contain U+0000 or an
 * unpaired surrogate, and no value may nest deeper than MAX_JSON_DEPTH. The
 * walk is iterative, so deeply nested JSON costs no stack.
 */
export function refuseUnsafeJson(body: unknown, where = 'body'): void {
  if (body === undefined) return;
  const check = (text: string): void => {
    if (text.includes('\0')) throw new ApiError(400, 'invalid_request', `${where} must not contain the NUL character (\\u0000)`);
    if (LONE_SURROGATE.test(text)) throw new ApiError(400, 'invalid_request', `${where} must not contain unpaired UTF-16 surrogates`);
  };
  // One level of nesting at a time: the depth is the level's, so no value carries its own.
  let level: unknown[] = [body];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const value of level) {
      if (typeof value === 'string') check(value);
      else if (value !== null && typeof value === 'object') {
        if (depth === MAX_JSON_DEPTH)
          throw new ApiError(400, 'invalid_request', `${where} must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
        if (Array.isArray(value)) for (const item of value) next.push(item);
        else {
          for (const [key, item] of Object.entries(value)) {
            check(key);
            next.push(item);
          }
        }
      }
    }
    level = next;
  }
}
