import type { Request } from 'express';
import type { OpenApiDocument, SpecOperation } from '../contract/document';
import type { SchemaValidator } from '../contract/schemas';
import { ApiError } from '../errors/api-error';
import { issuesOfAjv, describeIssues } from '../errors/validation-issues';
import type { Stage } from '../stage/stage';
import { cookiePairs } from './cookies';
import { deserializeSimple, fromCookies, fromPath, fromQuery, PREFIX, queryPairs, refuseUnsafeText, setOwn, take, type Parameter } from './styles';
import { contextOf, type RequestParameters } from '../context/request-context';
import { declaredParameters, validatorReads, type ParameterLocation } from './declared-parameters';
import type { ParameterCheck } from './validator';

/**
 * The parameters phase of one operation: every declared path, query, header
 * and cookie parameter deserialized by its `style` and `explode` (form,
 * spaceDelimited, pipeDelimited, deepObject, simple, label, matrix; or JSON
 * `content`), its text coerced to the types its schema declares, and
 * defaults applied. The result is `contextOf(req).parameters`, which the
 * handler receives. `check` (express-openapi-validator, see validator.ts)
 * then validates those values against their schemas; the engine's own Ajv
 * checks only the parameters the validator does not read (`validatorReads`).
 * Refused with 400 here, before any schema is consulted:
 *
 * - a query parameter the operation does not declare (an API key's query
 *   parameter, `apiKeyQueryNames`, is known);
 * - a parameter given twice that is not an exploded array;
 * - text that is not valid percent-encoded UTF-8, or holds U+0000 or an
 *   unpaired surrogate (neither can be stored or compared faithfully);
 * - a number written other than in decimal digits (`1e3` for an integer,
 *   `0x10`, `1.0` for an integer, ` 5`, `Infinity`: JavaScript would read
 *   them as numbers; `1e999` would be Infinity);
 * - an array longer than its schema's `maxItems` (or the server's cap), before its items are walked.
 *
 * @example stages.push(parametersStage(spec, op, { validator, check: validation.parameters(op), apiKeyQueryNames: ['api_key'] }));
 */
export function parametersStage(spec: OpenApiDocument, op: SpecOperation, options: ParametersOptions): Stage {
  const { validator, check: validate, apiKeyQueryNames = [] } = options;
  const parameters = declaredParameters(spec, op);
  const ownChecks = parameters.filter((parameter) => !validatorReads(parameter));
  for (const parameter of ownChecks) if (parameter.pointer) validator.compile(parameter.pointer);
  const byLocation = (location: ParameterLocation): Parameter[] => parameters.filter((parameter) => parameter.in === location);
  const path = byLocation('path');
  const query = byLocation('query');
  const header = byLocation('header');
  const cookie = byLocation('cookie');
  const [querystring] = byLocation('querystring');
  // 3.2's `style: cookie`: values as the Cookie header carries them, not percent-decoded.
  const rawCookies = cookie.some((parameter) => parameter.style === 'cookie');
  const knownQuery = knownQueryNames(query, apiKeyQueryNames);

  return (req, res) => {
    const result: RequestParameters = { path: {}, query: {}, header: {}, cookie: {} };
    if (path.length > 0) {
      const raw = contextOf(req).rawPathParams ?? {};
      for (const parameter of path) {
        const text = raw[parameter.name];
        if (text !== undefined) take(result.path, parameter, fromPath(parameter, text, req));
      }
    }
    const pairs = queryPairs(req);
    // The whole query string is one parameter (3.2's `in: querystring`), or each of its names is a declared one.
    if (querystring) readQuerystring(result, querystring, req, pairs);
    else if (pairs.length > 0) refuseUnknown(pairs, knownQuery);
    for (const parameter of query) take(result.query, parameter, fromQuery(parameter, pairs));
    for (const parameter of header) {
      const value = req.headers[parameter.name.toLowerCase()];
      if (value !== undefined) take(result.header, parameter, deserializeSimple(parameter, Array.isArray(value) ? value.join(',') : value, ','));
    }
    if (cookie.length > 0) {
      const cookies = cookiePairs(req.headers.cookie);
      const raw = rawCookies ? cookiePairs(req.headers.cookie, false) : cookies;
      for (const parameter of cookie) take(result.cookie, parameter, fromCookies(parameter, parameter.style === 'cookie' ? raw : cookies));
    }
    for (const parameter of parameters) applyDefault(result, parameter);
    for (const parameter of ownChecks) check(result, parameter, validator);
    contextOf(req).parameters = result;
    return validate?.(req, res, result);
  };
}

export interface ParametersOptions {
  /** The engine's own Ajv, for the parameters the request validator does not read. */
  validator: SchemaValidator;
  /** The request validator's check of the rest (undefined: the operation has none it reads). */
  check: ParameterCheck | undefined;
  /** The query parameters that carry API keys: known to every operation. */
  apiKeyQueryNames?: readonly string[];
}

/** The query names the operation accepts: its parameters (and an exploded object's properties, a deepObject's `name[...]`), and API keys. */
function knownQueryNames(query: Parameter[], apiKeyQueryNames: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>([...query.map((parameter) => parameter.name), ...apiKeyQueryNames]);
  const deep: string[] = [];
  let openObject = false;
  for (const parameter of query) {
    if (parameter.shape.kind !== 'object') continue;
    if (parameter.style === 'deepObject') deep.push(`${parameter.name}[`);
    else if (parameter.explode && !parameter.json) {
      for (const property of Object.keys(parameter.shape.properties)) exact.add(property);
      if (Object.keys(parameter.shape.properties).length === 0 || parameter.shape.additional.length > 0) openObject = true;
    }
  }
  return (name) => openObject || exact.has(name) || deep.some((prefix) => name.startsWith(prefix));
}

function refuseUnknown(pairs: Array<[string, string]>, known: (name: string) => boolean): void {
  for (const [name] of pairs) {
    if (known(name)) continue;
    if (/[[\]]/.test(name)) {
      throw new ApiError(
        400,
        'invalid_request',
        `query.${name} is not allowed: arrays and objects (name[]=, name[key]=) are only accepted where the contract declares them`,
      );
    }
    throw new ApiError(400, 'invalid_request', `query.${name} is not a known query parameter`);
  }
}

/**
 * 3.2's `in: querystring`: the query string as one value, described by its
 * `content`: JSON text (percent-encoded), or form fields
 * (`application/x-www-form-urlencoded`: an object of its names, a name given
 * twice an array), their text coerced to the types the schema declares. The
 * handler receives it as `query[name]`.
 */
function readQuerystring(result: RequestParameters, parameter: Parameter, req: Request, pairs: Array<[string, string]>): void {
  const target = req.originalUrl;
  const start = target.indexOf('?');
  if (start === -1 || start === target.length - 1) return;
  const where = `querystring.${parameter.name}`;
  if (parameter.json) {
    let text: string;
    try {
      text = decodeURIComponent(target.slice(start + 1));
    } catch {
      throw new ApiError(400, 'invalid_request', `${where} is not valid percent-encoded UTF-8`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(400, 'invalid_request', `${where} is not valid JSON`);
    }
    refuseUnsafeText(value, where);
    setOwn(result.query, parameter.name, value);
    return;
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of pairs) {
    const present = Object.hasOwn(fields, name) ? fields[name] : undefined;
    setOwn(fields, name, present === undefined ? value : Array.isArray(present) ? [...present, value] : [present, value]);
  }
  take(result.query, { ...parameter, in: 'querystring', shape: parameter.shape.kind === 'object' ? parameter.shape : OPEN_OBJECT }, fields);
}

/** The shape of a form whose schema is not an object: its fields as text. */
const OPEN_OBJECT = { kind: 'object', properties: {}, additional: ['string'] } as unknown as Parameter['shape'];

/** Where a parameter's value is kept: `querystring` with the query (`query[name]`). */
const valuesOf = (result: RequestParameters, location: string): Record<string, unknown> =>
  result[(location === 'querystring' ? 'query' : location) as keyof RequestParameters];

/** The default of an absent parameter, which the handler receives (and the validator checks). */
function applyDefault(result: RequestParameters, parameter: Parameter): void {
  const into = valuesOf(result, parameter.in);
  if (parameter.default !== undefined && !Object.hasOwn(into, parameter.name)) setOwn(into, parameter.name, structuredClone(parameter.default));
}

/** The engine's own check of a parameter the request validator does not read (a path parameter, always present). */
function check(result: RequestParameters, parameter: Parameter, validator: SchemaValidator): void {
  const into = valuesOf(result, parameter.in);
  if (!Object.hasOwn(into, parameter.name)) {
    // The validator refuses a missing required parameter it reads; this one it does not read (a query string, a path parameter is always there).
    if (parameter.required) throw new ApiError(400, 'invalid_request', `${PREFIX[parameter.in]}.${parameter.name} is required`);
    return;
  }
  if (!parameter.pointer) return;
  const validate = validator.compile(parameter.pointer);
  if (!validate(into[parameter.name])) {
    throw new ApiError(400, 'invalid_request', describeIssues(issuesOfAjv(validate.errors ?? [], `/${PREFIX[parameter.in]}/${parameter.name}`)));
  }
}
