import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { int32Format, int64Format } from '../contract/formats';
import { mediaKind } from '../contract/media-types';
import { chain, fromMiddleware, type Stage } from '../stage/stage';
import { withUploads } from './form-fields';
import { resolveRef } from '../contract/refs';
import { contextOf } from '../context/request-context';

export interface ValidatorOptions {
  /** Every response goes through the validator before it is sent (strict mode: VALIDATE_RESPONSES=true). */
  validateResponses: boolean;
}

/** Formats every Ajv of the engine checks the same way; a format nobody defines is accepted, as JSON Schema says. */
function formatsFor(spec: OpenApiDocument): Record<string, unknown> {
  const formats: Record<string, unknown> = { int64: int64Format, int32: int32Format };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'format' && typeof value === 'string' && !KNOWN_FORMATS.has(value) && !(value in formats)) formats[value] = true;
        else visit(value);
      }
    }
  };
  visit(spec);
  return formats;
}

/** What ajv-formats and the validator define themselves. */
const KNOWN_FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]);

/**
 * The request-body (and, in strict mode, response) validation of one
 * operation: express-openapi-validator, used as its authors designed it (its
 * whole middleware chain, through its public options), on a copy of the
 * document whose only path is this operation's. The engine has already
 * deserialized and validated the parameters (styles the validator cannot
 * read) and read the body by media type, so the copy has no parameters and
 * no security, and bodies are never coerced. Multipart files take their
 * place in the body once it is valid.
 *
 * Undefined when there is nothing for it to do: no request body and no
 * strict response validation.
 *
 * @example const validate = requestValidator(spec, '/v1', op, { validateResponses: false }); if (validate) stages.push(validate);
 */
export function requestValidator(spec: OpenApiDocument, basePath: string, op: SpecOperation, options: ValidatorOptions): Stage | undefined {
  const hasBody = op.operation['requestBody'] !== undefined;
  if (!hasBody && !options.validateResponses) return undefined;
  const operation = withoutExtensions(structuredClone(op.operation));
  delete operation['parameters'];
  delete operation['security'];
  delete operation['callbacks'];
  // A body is optional unless `required: true`; said outright, so the validator lets an absent one through
  // (it reads a missing `required` as a missing Content-Type to refuse). The body phase has refused a missing required one.
  if (operation['requestBody'] !== undefined) {
    const { node } = resolveRef(spec, operation['requestBody']);
    if (node['required'] !== true) operation['requestBody'] = { ...structuredClone(node), required: false };
  }
  const only = {
    openapi: spec.openapi,
    info: { title: spec.info.title, version: spec.info.version },
    servers: [{ url: basePath }],
    security: [],
    paths: { [op.path]: { [op.method]: operation } },
    components: structuredClone(readComponents(spec)),
  };
  const middlewares = OpenApiValidator.middleware({
    apiSpec: only as never,
    validateRequests: { allowUnknownQueryParameters: true, coerceTypes: false },
    validateResponses: options.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    // Bodies are read by the body phase (multipart with multer, within the body limit).
    fileUploader: false,
    ignoreUndocumented: false,
    // The document was checked when it was loaded (and by lint:api); the copy differs from it only in what it leaves out.
    validateApiSpec: false,
    formats: formatsFor(spec) as never,
  }) as RequestHandler[];
  const validate = chain(middlewares.map(fromMiddleware));
  return (req, res) => {
    // A binary body has no schema to check beyond being there; an absent optional body has nothing.
    const context = contextOf(req);
    const { received } = context;
    const bytes = received !== undefined && (received.kind === 'binary' || mediaKind(received.mediaType) === 'xml');
    if (!options.validateResponses && (!received || bytes)) return;
    // Bytes have no schema to check beyond being there: the validator sees an empty string in their place.
    const sent = req.body as unknown;
    if (bytes) req.body = '';
    const contentType = req.headers['content-type'];
    showDeclaredType(req);
    const restore = (): void => {
      req.headers['content-type'] = contentType;
      req.body = bytes ? sent : withUploads(req.body, context.uploads);
    };
    let done: void | Promise<void>;
    try {
      done = validate(req, res);
    } catch (error) {
      req.headers['content-type'] = contentType;
      throw error;
    }
    if (!(done instanceof Promise)) return restore();
    return done.then(restore, (error: unknown) => {
      req.headers['content-type'] = contentType;
      throw error;
    });
  };
}

/**
 * The document's components without their extensions. Extensions reach the
 * validator nowhere (the root's, the components', the operation's): its
 * reference resolver opens every `$ref` it finds, and an extension may point
 * at a documentation file beside the document (`x-topics: [{content: {$ref:
 * ./intro.md}}]`), which it would look for relative to the working
 * directory, failing every request of the version.
 */
function readComponents(spec: OpenApiDocument): Record<string, unknown> {
  return withoutExtensions((spec.components ?? {}) as Record<string, unknown>);
}

const withoutExtensions = (node: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(node).filter(([key]) => !key.startsWith('x-')));

/**
 * While the validator runs, Content-Type is the declared media type the body
 * was read as (the key of `content`: `text/*` for a `text/x-anything` body),
 * or absent without a body. The validator compiles and keeps a validator per
 * distinct Content-Type value, so a client's own types (`text/x1`, `text/x2`,
 * `application/json; x=<random>`) would grow its caches forever, a schema
 * compile each; declared types are a fixed set.
 */
function showDeclaredType(req: Parameters<Stage>[0]): void {
  const { received } = contextOf(req);
  if (received) req.headers['content-type'] = received.mediaType;
  else delete req.headers['content-type'];
}
