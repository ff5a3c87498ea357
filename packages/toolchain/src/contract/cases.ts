/**
 * Test cases of one operation: positive (valid against the contract, must
 * get a declared 2xx), negative (one constraint broken, must get a 4xx) and
 * authentication (missing or invalid key, must get 401), and a method the
 * path does not declare (must get 405). Requests are built
 * when the case runs, so path parameters can use ids the server returned
 * earlier in the run.
 */
import fc from 'fast-check';
import { arbitraryFor, baseValue, edgeValues, headerArbitraryFor, sendableAsHeader, violations, type LabelledValue } from './schema-values';
import type { Operation, Parameter } from './spec';

/** What a request carries, before serialisation. A `rawBody` is sent as is (malformed JSON). */
export interface RequestInput {
  params: Record<string, unknown>;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  /** `valid`: the key (or token) under test, as the operation's scheme carries it; `missing`: none; `invalid`: a well-formed key (or token) that does not exist. */
  auth: 'valid' | 'missing' | 'invalid';
  /** A method the path does not declare, instead of the operation's. */
  method?: string;
}

export type CaseKind = 'positive' | 'negative' | 'auth' | 'method';

export interface Case {
  operation: Operation;
  kind: CaseKind;
  /** What the case tries, e.g. `query.limit: above maximum 100`. */
  label: string;
  input: RequestInput;
  /** Path parameters left out of `input.params`: filled with ids the server returned, when there are any. */
  usesKnownIds: boolean;
  /** Statuses that satisfy the case (negative and auth cases); positive cases want a declared 2xx. */
  expectedStatuses?: number[];
}

/** Schemathesis' default for negative_data_rejection: the 4xx a server may use to refuse invalid data. */
export const REJECTION_STATUSES = [400, 401, 403, 404, 406, 409, 413, 415, 422, 428];

/** A key of the project's format (`pas_` + 43 characters) that no server issued. */
export const INVALID_KEY = `pas_${'0'.repeat(43)}`;

const parametersIn = (operation: Operation, location: Parameter['in']): Parameter[] => operation.parameters.filter((parameter) => parameter.in === location);

/** Valid values for every required parameter (path parameters are left to known ids). */
function baseParams(operation: Operation): Record<string, unknown> {
  return Object.fromEntries(
    operation.parameters
      .filter((p) => p.required && p.in !== 'path')
      .map((p) => {
        const value = baseValue(p.schema);
        // An empty array is no parameter at all in a query string: a required one gets an item.
        return [p.name, Array.isArray(value) && value.length === 0 ? [baseValue(p.schema.items ?? {})] : value];
      }),
  );
}

/** A body's base value; a stream of items gets one (an empty stream is no body at all). */
function baseBody(body: NonNullable<Operation['body']>): unknown {
  const value = baseValue(body.schema);
  return body.kind === 'items' && Array.isArray(value) && value.length === 0 ? [baseValue(body.schema.items ?? {})] : value;
}

/** Text with an unpaired UTF-16 surrogate: no URL, header or cookie can carry it (it has no UTF-8). */
const unpaired = (value: unknown): boolean =>
  !everyString(value, (text) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text));

/** Whether a value can be sent in `parameter` as the case means it (a header carries only some text; nothing carries an unpaired surrogate). */
const sendableIn = (parameter: Parameter, value: unknown): boolean =>
  !unpaired(value) &&
  !holdsNul(value) &&
  (parameter.in !== 'header' || everyString(value, sendableAsHeader)) &&
  (parameter.in !== 'path' || value !== '') &&
  unambiguous(parameter, value);

/**
 * Whether the items of an array or object written in one piece can be read
 * back: an item holding the style's own separator (a comma, a space, a
 * pipe, `=`, a dot in a label) would split differently, as it would for any
 * server (OpenAPI leaves such values undefined).
 */
function unambiguous(parameter: Parameter, value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  const separators = parameter.style === 'label' ? /[,|\s;=.&]/ : /[,|\s;=&]/;
  return everyString(value, (text) => text !== '' && !separators.test(text)) && Object.keys(value).every((name) => !separators.test(name));
}

/** NUL in a parameter is refused by the server whatever the schema says (a rule of its own), so no valid case carries it. */
const holdsNul = (value: unknown): boolean => !everyString(value, (text) => !text.includes('\u0000'));

/** Whether every string in a value (an array's items, an object's values) passes `test`. */
function everyString(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.every((item) => everyString(item, test));
  return value === null || typeof value !== 'object' || Object.values(value).every((item) => everyString(item, test));
}

/** Parameters a positive case may fill with a value of its own: not those whose values only the server issues. */
const madeUpAllowed = (parameter: Parameter): boolean => !parameter.issuedByServer;

function positiveCases(operation: Operation, seed: number, maxExamples: number): Case[] {
  const cases: Case[] = [];
  // A required parameter only the server can fill: no request can be made up that must succeed.
  if (operation.parameters.some((parameter) => parameter.required && parameter.issuedByServer)) return cases;
  const body = operation.body ? baseBody(operation.body) : undefined;
  const positive = (label: string, input: Partial<RequestInput>, usesKnownIds = true): Case => ({
    operation,
    kind: 'positive',
    label,
    input: { params: baseParams(operation), ...(operation.body && { body }), auth: 'valid', ...input },
    usesKnownIds,
  });

  cases.push(positive('required fields only, defaults omitted', {}));
  // Each parameter on each of its edges, the others at their base value.
  for (const parameter of operation.parameters.filter(madeUpAllowed)) {
    for (const edge of edgeValues(parameter.schema).filter((candidate) => sendableIn(parameter, candidate.value))) {
      cases.push(
        positive(
          `${parameter.in}.${parameter.name}: ${edge.label}`,
          { params: { ...baseParams(operation), [parameter.name]: edge.value } },
          parameter.in !== 'path',
        ),
      );
    }
  }
  // Edges and random bodies for JSON; a form, multipart, text or bytes body is sent as its base value.
  if (operation.body?.kind === 'json') {
    const schema = operation.body.schema;
    for (const [name, sub] of Object.entries(schema.properties ?? {})) {
      const edges: LabelledValue[] = edgeValues(sub);
      if (!schema.required?.includes(name) && edges.length === 0) edges.push({ label: 'present', value: baseValue(sub) });
      for (const edge of edges) {
        cases.push(positive(`body.${name}: ${edge.label}`, { body: { ...(body as object), [name]: edge.value } }));
      }
    }
    if (schema.type === 'object' && schema.properties) {
      const all = Object.fromEntries(Object.entries(schema.properties).map(([name, sub]) => [name, baseValue(sub)]));
      cases.push(positive('body: every optional property present', { body: all }));
    }
  }

  // Property-based: random valid requests, reproducible from the seed.
  const generated = operation.parameters.filter((p) => p.in !== 'path' && madeUpAllowed(p));
  const paramsArbitrary = fc.record(
    Object.fromEntries(generated.map((p) => [p.name, p.in === 'header' ? headerArbitraryFor(p.schema) : arbitraryFor(p.schema)])),
    { requiredKeys: generated.filter((p) => p.required).map((p) => p.name) },
  );
  const arbitrary = fc.record({
    params: paramsArbitrary,
    body:
      operation.body?.kind === 'json'
        ? arbitraryFor(operation.body.schema)
        : operation.body?.kind === 'items'
          ? arbitraryFor(operation.body.schema).map((items) => (Array.isArray(items) && items.length === 0 ? body : items))
          : fc.constant(body),
  });
  fc.sample(arbitrary, { seed, numRuns: maxExamples }).forEach((sample, index) => {
    // A parameter value no request can carry (an unpaired surrogate in a URL) makes no case.
    const values = sample.params as Record<string, unknown>;
    if (generated.some((parameter) => parameter.name in values && !sendableIn(parameter, values[parameter.name]))) return;
    // Nor does a required array left empty: it is no parameter at all in a query string.
    if (generated.some((parameter) => parameter.required && Array.isArray(values[parameter.name]) && (values[parameter.name] as unknown[]).length === 0))
      return;
    cases.push(positive(`random example ${index + 1} (fast-check)`, { params: sample.params, ...(operation.body && { body: sample.body }) }));
  });
  return cases;
}

function negativeCases(operation: Operation): Case[] {
  const cases: Case[] = [];
  const body = operation.body ? baseBody(operation.body) : undefined;
  const negative = (label: string, input: Partial<RequestInput>, expectedStatuses = REJECTION_STATUSES): Case => ({
    operation,
    kind: 'negative',
    label,
    input: { params: baseParams(operation), ...(operation.body && { body }), auth: 'valid', ...input },
    usesKnownIds: true,
    expectedStatuses,
  });

  for (const parameter of operation.parameters) {
    if (parameter.in === 'cookie') continue;
    // Paths, query strings and headers are text: a "wrong type" there is text of the wrong shape.
    // A header carries only some text: its violations are values it can carry.
    for (const violation of violations(parameter.schema, { asText: true, header: parameter.in === 'header' }).filter((candidate) =>
      sendableIn(parameter, candidate.value),
    )) {
      cases.push(
        negative(`${parameter.in}.${parameter.name}: ${violation.label}`, { params: { ...baseParams(operation), [parameter.name]: violation.value } }),
      );
    }
    if (parameter.issuedByServer) {
      // Valid by the schema, but not issued by the server (x-issued-by: server): refused.
      const madeUp = baseValue(parameter.schema);
      if (sendableIn(parameter, madeUp)) {
        cases.push(
          negative(`${parameter.in}.${parameter.name}: a value the server did not issue (x-issued-by: server)`, {
            params: { ...baseParams(operation), [parameter.name]: madeUp },
          }),
        );
      }
    }
    if (parameter.required && parameter.in !== 'path') {
      const { [parameter.name]: _missing, ...rest } = baseParams(operation);
      cases.push(negative(`${parameter.in}.${parameter.name}: required parameter missing`, { params: rest }));
    }
  }
  if (operation.body) {
    const json = operation.body.kind === 'json';
    if (json || operation.body.kind === 'items') {
      for (const violation of violations(operation.body.schema)) cases.push(negative(`body: ${violation.label}`, { body: violation.value }));
      cases.push(negative('body: malformed JSON', { rawBody: '{"name": "unterminated', contentType: operation.body.mediaType }));
    }
    if (operation.body.required) {
      cases.push(negative('body: missing (required)', { body: undefined }));
      if (json) cases.push(negative(`body: empty, as ${operation.body.mediaType} (required)`, { rawBody: '', contentType: operation.body.mediaType }));
    }
    const undeclared = operation.body.mediaTypes.some((type) => /^text\/(plain|\*)|^\*\/\*/.test(type)) ? 'application/x-not-declared' : 'text/plain';
    cases.push(negative(`body: a media type the operation does not declare (${undeclared})`, { rawBody: 'name=Rex', contentType: undeclared }, [415]));
  }
  return cases;
}

function authCases(operation: Operation): Case[] {
  if (!operation.secured) return [];
  const auth = (label: string, mode: RequestInput['auth']): Case => ({
    operation,
    kind: 'auth',
    label,
    input: { params: baseParams(operation), ...(operation.body && { body: baseBody(operation.body) }), auth: mode },
    usesKnownIds: true,
    expectedStatuses: [401],
  });
  return [auth('no credentials', 'missing'), auth('credentials that do not exist', 'invalid')];
}

/** Methods a path may be probed with; the first one the path does not declare is sent (once per path). */
const PROBED_METHODS = ['DELETE', 'PUT', 'PATCH'];

function unsupportedMethodCases(operation: Operation, siblings: Operation[]): Case[] {
  const onPath = siblings.filter((other) => other.path === operation.path);
  // Once per path: on its first operation.
  if (onPath[0] !== operation) return [];
  const method = PROBED_METHODS.find((candidate) => !onPath.some((other) => other.method === candidate));
  if (!method) return [];
  return [
    {
      operation,
      kind: 'method',
      label: `${method} ${operation.path} (not declared)`,
      input: { params: {}, auth: 'valid', method },
      usesKnownIds: true,
      expectedStatuses: [405],
    },
  ];
}

/**
 * Every case of an operation, in a fixed order for a given seed. `siblings`
 * (the contract's operations) tell which methods the path declares.
 *
 * @example casesFor(listPets, { seed: 1, maxExamples: 5 }).filter((c) => c.kind === 'negative').map((c) => c.label)
 */
export function casesFor(operation: Operation, options: { seed: number; maxExamples: number; siblings?: Operation[] }): Case[] {
  const all = [
    ...positiveCases(operation, options.seed, options.maxExamples),
    ...negativeCases(operation),
    ...authCases(operation),
    ...unsupportedMethodCases(operation, options.siblings ?? [operation]),
  ];
  // The same request twice proves nothing more (e.g. random examples of an operation without
  // parameters). Cases whose path takes a known id differ by the id each one picks (by index).
  const picksId = pathParameters(operation).length > 0;
  const seen = new Set<string>();
  return all.filter((test, index) => {
    const key = JSON.stringify([test.kind, test.input, test.usesKnownIds && picksId ? index : null]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export const pathParameters = (operation: Operation): Parameter[] => parametersIn(operation, 'path');
