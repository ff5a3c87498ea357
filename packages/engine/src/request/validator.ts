import * as OpenApiValidator from 'express-openapi-validator';
import type { Request, RequestHandler } from 'express';
import { HTTP_METHODS, isOpenApi32, listOperations, type OpenApiDocument, type SpecOperation } from '../contract/document';
import { int32Format, int64Format } from '../contract/formats';
import { formatsIn } from '../contract/schemas';
import { mediaKind } from '../contract/media-types';
import { fromMiddlewares, type Stage } from '../stage/stage';
import { withUploads } from './form-fields';
import { resolveRef } from '../contract/refs';
import { contextOf } from '../context/request-context';
import { setOwn } from './styles';
import { declaredParameters, validatorReads, type DeclaredParameter } from './declared-parameters';
import { withoutExtensions } from '../contract/extensions';
import { itemFormat } from './items';

export interface ValidatorOptions {
  /** Every response goes through the validator before it is sent (strict mode: VALIDATE_RESPONSES=true). */
  validateResponses: boolean;
}

/** Formats every Ajv of the engine checks the same way; a format nobody defines is accepted, as JSON Schema says. */
function formatsFor(spec: OpenApiDocument): Record<string, unknown> {
  const formats: Record<string, unknown> = { int64: int64Format, int32: int32Format };
  for (const format of formatsIn(spec)) if (!KNOWN_FORMATS.has(format) && !(format in formats)) formats[format] = true;
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

/** Where the parameters phase has put what the validator checks: the values the handler will receive. */
export interface ParameterValues {
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  cookie: Record<string, unknown>;
}

/** What one version's validation offers each of its operations. */
export interface RequestValidation {
  /**
   * The check of an operation's parameters, run by the parameters phase once
   * it has read them (before the body is read): undefined when the operation
   * has none the validator reads.
   */
  parameters(op: SpecOperation): ParameterCheck | undefined;
  /** The check of an operation's body (and, in strict mode, its response): undefined when there is nothing to check. */
  body(op: SpecOperation): Stage | undefined;
}

/** Checks the values the parameters phase read, as the validator reads them (400 naming what breaks its schema). */
export type ParameterCheck = (req: Request, res: Parameters<Stage>[1], values: ParameterValues) => void | Promise<void>;

/**
 * Request validation for one served version: express-openapi-validator, used
 * through its public middleware with its whole chain (route lookup, request
 * validation, and in strict mode response validation), twice over the same
 * version: one instance checks parameters, so they are refused before the
 * body is read; the other checks the body once the body phase has read it.
 * Each instance gets one document for the whole version (every operation,
 * with only the parts it checks), so a version costs two validators however
 * many operations it has, and each schema is compiled once.
 *
 * The validator is shown the request as the engine read it, through a view
 * (`RequestView`, a plain object): the path, the parameters the
 * handler will receive (arrays and objects copied, JSON parameters as their
 * text), the declared media type of the body and the body. So its coercion
 * and defaults change its own copies, never what the handler receives, and a
 * client's own Content-Type values never grow its caches.
 *
 * @example const validation = requestValidation(spec, '/v1', { validateResponses: false });
 * const check = validation.parameters(op); // run by the parameters phase
 * const validate = validation.body(op); // the `validate` phase
 */
export function requestValidation(spec: OpenApiDocument, basePath: string, options: ValidatorOptions): RequestValidation {
  const formats = formatsFor(spec);
  const forParameters = validatorOf(parametersDocument(spec, basePath), formats, false);
  const forBodies = validatorOf(bodiesDocument(spec, basePath, options.validateResponses), formats, options.validateResponses);
  return {
    parameters(op) {
      const read = readParameters(spec, op);
      if (read.length === 0) return undefined;
      const jsonIn = (place: string): ReadonlySet<string> =>
        new Set(read.filter((parameter) => parameter.json && parameter.in === place).map((parameter) => parameter.name));
      // Header and cookie JSON parameters are shown to the validator as the values the engine parsed (asValidatorReadsIt).
      const jsonNames: JsonNames = { query: jsonIn('query'), header: new Set(), cookie: new Set() };
      const route = validatorRoute(op, basePath);
      return (req, res, values) => forParameters(parameterView(req, values, jsonNames, route) as unknown as Request, res);
    },
    body(op) {
      const hasBody = op.operation['requestBody'] !== undefined;
      if (!hasBody && !options.validateResponses) return undefined;
      const route = validatorRoute(op, basePath);
      return (req, res) => {
        const context = contextOf(req);
        const { received } = context;
        // A binary body has no schema to check beyond being there; an absent optional body has nothing.
        const bytes = received !== undefined && (received.kind === 'binary' || mediaKind(received.mediaType) === 'xml');
        if (!options.validateResponses && (!received || bytes)) return;
        const view = bodyView(req, bytes, route);
        const done = forBodies(view as unknown as Request, res);
        const keep = (): void => {
          if (!bytes) req.body = withUploads(view.body, context.uploads);
        };
        if (done === undefined) return keep();
        return done.then(keep);
      };
    },
  };
}

/** One express-openapi-validator over `document`, as one stage. */
function validatorOf(document: Record<string, unknown>, formats: Record<string, unknown>, validateResponses: boolean): Stage {
  const middlewares = OpenApiValidator.middleware({
    apiSpec: document as never,
    // Unknown query parameters are refused by the parameters phase, which knows API keys sent in the query.
    validateRequests: { allowUnknownQueryParameters: true, coerceTypes: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    // Bodies are read by the body phase (multipart with multer, within the body limit).
    fileUploader: false,
    ignoreUndocumented: false,
    // The document was checked when it was loaded (and by lint:api); the copy differs from it only in what it leaves out.
    validateApiSpec: false,
    formats: formats as never,
  }) as RequestHandler[];
  return fromMiddlewares(middlewares);
}

/**
 * The version as the parameter validator reads it: every operation with the
 * parameters it reads (the path item's and its own, resolved), no body, no
 * security, no responses.
 */
function parametersDocument(spec: OpenApiDocument, basePath: string): Record<string, unknown> {
  return versionDocument(spec, basePath, (op) => ({
    parameters: readParameters(spec, op).map((parameter) => asValidatorReadsIt(withoutExtensions(parameter.declaration), parameter.json)),
    responses: {},
  }));
}

/**
 * A header or cookie parameter as the validator reads it correctly, patched
 * or not: its default `style` and `explode` said outright (the published
 * validator tests `param.style` where `param.in` is meant, and gives such a
 * parameter no style), and JSON `content` as the schema of the value the
 * engine parsed (the published validator never parses JSON text outside
 * the query). Query parameters are read as declared; a path parameter with
 * JSON `content` still needs the repository's patch of the validator.
 */
function asValidatorReadsIt(declaration: Record<string, unknown>, json: boolean): Record<string, unknown> {
  const place = declaration['in'];
  if (place !== 'header' && place !== 'cookie') return declaration;
  const styled = { style: place === 'header' ? 'simple' : 'form', explode: place === 'cookie' };
  if (json) {
    const { content, ...rest } = declaration as { content: Record<string, { schema?: unknown }> };
    return { ...rest, ...styled, schema: Object.values(content)[0]?.schema ?? {} };
  }
  return { ...styled, ...declaration };
}

/**
 * The version as the body validator reads it: every operation with its body,
 * no parameters, no security; its responses only when it checks them
 * (strict mode), since it prepares every response schema at start.
 */
function bodiesDocument(spec: OpenApiDocument, basePath: string, validateResponses: boolean): Record<string, unknown> {
  return versionDocument(spec, basePath, (op) => {
    const operation = withoutExtensions(op.operation);
    if (!validateResponses) operation['responses'] = {};
    delete operation['parameters'];
    delete operation['security'];
    delete operation['callbacks'];
    // A body is optional unless `required: true`; said outright, so the validator lets an absent one through
    // (it reads a missing `required` as a missing Content-Type to refuse). The body phase has refused a missing required one.
    if (operation['requestBody'] !== undefined) {
      const { node } = resolveRef(spec, operation['requestBody']);
      const body = withoutExtensions(node);
      // A body of items (JSON Lines, JSON text sequences) is read and checked item by item by the engine (request/items.ts): the validator sees its media type only.
      const content = { ...((body['content'] ?? {}) as Record<string, unknown>) };
      for (const mediaType of Object.keys(content)) if (itemFormat(mediaType) !== undefined) content[mediaType] = {};
      operation['requestBody'] = { ...body, content, required: node['required'] === true };
    }
    return operation;
  });
}

/** A document of the version's operations, each as `operationOf` shapes it, with what the validator reads besides: its components without extensions. */
function versionDocument(spec: OpenApiDocument, basePath: string, operationOf: (op: SpecOperation) => Record<string, unknown>): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of listOperations(spec)) {
    const { path, method } = validatorRoute(op, basePath).declared;
    paths[path] ??= {};
    paths[path]![method] = operationOf(op);
  }
  return {
    // The validator refuses 3.2: it reads a copy labelled 3.1, with 3.2's methods under routes of its own (validatorRoute).
    openapi: isOpenApi32(spec) ? '3.1.1' : spec.openapi,
    info: { title: spec.info.title, version: spec.info.version },
    servers: [{ url: basePath }],
    security: [],
    paths,
    components: readComponents(spec),
  };
}

/** The methods express-openapi-validator routes (those of a 3.0 / 3.1 path item). */
const VALIDATOR_METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);

/**
 * Where the validator finds an operation, and how a request of it is shown:
 * as written, for the methods it knows; a 3.2 `query` operation or one of
 * `additionalOperations` (which it does not route) as a POST on a route of
 * its own, `/~query/pets/{id}`, whose request is shown with that path.
 */
interface ValidatorRoute {
  declared: { path: string; method: string };
  /** The method the view shows; undefined: the request's own. */
  method: string | undefined;
  /** The request's path as the view shows it. */
  path(requestPath: string): string;
}

function validatorRoute(op: SpecOperation, basePath: string): ValidatorRoute {
  if (VALIDATOR_METHODS.has(op.method)) return { declared: { path: op.path, method: op.method }, method: undefined, path: (requestPath) => requestPath };
  const prefix = `/~${op.method}`;
  return {
    declared: { path: `${prefix}${op.path}`, method: 'post' },
    method: 'POST',
    path: (requestPath) => `${basePath}${prefix}${requestPath.slice(basePath.length)}`,
  };
}

/** The parameters of an operation the validator reads. */
const readParameters = (spec: OpenApiDocument, op: SpecOperation): DeclaredParameter[] => declaredParameters(spec, op).filter(validatorReads);

/**
 * What the validator reads of a request, as a plain object of one fixed
 * shape: the method, the path (it matches the operation, and path
 * parameters, itself), the app (its routing options), and the parts it
 * checks. A view, not the request: the validator's coercion and defaults
 * change the view's copies, never what the handler receives. (An object made
 * with the request as its prototype would do the same, but turns the request
 * into a prototype, which V8 then serves slowly for the rest of its life.)
 */
class RequestView {
  readonly url: string;
  readonly path: string;
  readonly baseUrl = '';
  params: Record<string, unknown> = {};
  openapi: unknown = undefined;
  readonly signedCookies = undefined;
  constructor(
    private readonly request: Request,
    readonly method: string,
    readonly originalUrl: string,
    readonly app: unknown,
    public headers: Record<string, unknown>,
    public query: Record<string, unknown>,
    public cookies: Record<string, unknown>,
    public body: unknown,
  ) {
    this.url = originalUrl;
    this.path = originalUrl;
  }

  /** The router's `next` of the request: where an error the response validator finds after the stage has settled goes. */
  get next(): Request['next'] {
    return this.request.next;
  }
}

/** The request as the parameter validator sees it: the query, headers and cookies the parameters phase read, as copies. */
function parameterView(req: Request, values: ParameterValues, jsonNames: JsonNames, route: ValidatorRoute): RequestView {
  return new RequestView(
    req,
    route.method ?? req.method,
    route.path(pathOf(req.originalUrl)),
    req.app,
    copied(values.header, jsonNames.header, true),
    copied(values.query, jsonNames.query, false),
    copied(values.cookie, jsonNames.cookie, false),
    undefined,
  );
}

/** The names of an operation's JSON `content` parameters, by place. */
type JsonNames = Readonly<Record<keyof ParameterValues, ReadonlySet<string>>>;

/** The request as the body validator sees it: the body under its declared media type (an empty string in place of bytes), and `Accept` for strict response validation. */
function bodyView(req: Request, bytes: boolean, route: ValidatorRoute): RequestView {
  const { received } = contextOf(req);
  const headers: Record<string, unknown> = {};
  if (received) headers['content-type'] = received.mediaType;
  if (req.headers.accept !== undefined) headers['accept'] = req.headers.accept;
  return new RequestView(req, route.method ?? req.method, route.path(pathOf(req.originalUrl)), req.app, headers, {}, {}, bytes ? '' : (req.body as unknown));
}

/** The path of a request target: the validator finds the operation by it; the query it is shown already read. */
const pathOf = (target: string): string => {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
};

/**
 * Values the validator may change: arrays and objects copied, JSON values as
 * JSON text again (it parses `content` parameters itself); header names in
 * lower case, as the validator looks them up (Node lowercases them).
 */
function copied(values: Record<string, unknown>, jsonNames: ReadonlySet<string>, lowerCaseNames: boolean): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(values)) {
    const value = values[name];
    const key = lowerCaseNames ? name.toLowerCase() : name;
    if (jsonNames.has(name)) setOwn(copy, key, JSON.stringify(value));
    else setOwn(copy, key, Array.isArray(value) ? [...value] : value !== null && typeof value === 'object' ? { ...value } : value);
  }
  return copy;
}

/**
 * The document's components without their extensions, at every depth. No
 * extension reaches the validator (the root's, the components', the
 * operations', a schema's): its reference resolver opens every `$ref` it
 * finds, and an extension may point at a documentation file beside the
 * document (`x-topics: [{content: {$ref: ./intro.md}}]`), which it would look
 * for relative to the working directory, failing every request of the version.
 */
function readComponents(spec: OpenApiDocument): Record<string, unknown> {
  return withoutExtensions((spec.components ?? {}) as Record<string, unknown>);
}
