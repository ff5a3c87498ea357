/**
 * The checks, named and scoped as Schemathesis names them
 * (https://schemathesis.readthedocs.io/en/stable/reference/checks/):
 *
 * - not_a_server_error: no 5xx, ever (a `default` response does not excuse one);
 *   also no missing response (timeout, connection reset);
 * - status_code_conformance: the status is declared for the operation (or `default`);
 * - content_type_conformance: the Content-Type is a declared media type;
 * - response_headers_conformance: declared required headers are present and valid;
 * - response_schema_conformance: the body is valid against the declared schema
 *   (ajv, JSON Schema 2020-12), and every error is an Error object whose
 *   `status` is the HTTP status;
 * - positive_data_acceptance: a valid request gets a declared 2xx;
 * - negative_data_rejection: an invalid request gets a 4xx, never a 2xx;
 * - ignored_auth: a missing or invalid key gets 401;
 * - unsupported_method: a method the path does not declare gets 405;
 * - ensure_resource_availability (stateful.ts): what was created or listed can be read back.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describesEventFields } from '@spec-first/engine/testing';
import { eventData, readEvent } from '@spec-first/engine/testing';
import type { Case } from './cases';
import { declaredResponse, type Contract, type Operation, type Schema } from './spec';
import type { HttpResponse } from './transport';

export type CheckName =
  | 'not_a_server_error'
  | 'status_code_conformance'
  | 'content_type_conformance'
  | 'response_headers_conformance'
  | 'response_schema_conformance'
  | 'positive_data_acceptance'
  | 'negative_data_rejection'
  | 'ignored_auth'
  | 'unsupported_method'
  | 'ensure_resource_availability'
  | 'conditional_requests';

export interface CheckFailure {
  check: CheckName;
  expected: string;
  got: string;
}

// Unknown formats are ignored, as JSON Schema says, and quietly: they are the document's own names.
const ajv = new Ajv2020({ strict: false, allErrors: true, logger: { log: () => undefined, warn: () => undefined, error: console.error } });
addFormats(ajv);
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
const compiled = new WeakMap<Schema, ValidateFunction>();

/**
 * Validates a value against a schema; returns ajv's message or undefined.
 *
 * @example schemaErrors({ type: 'integer' }, 'x') // 'data must be integer'
 */
export function schemaErrors(schema: Schema, value: unknown): string | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate(value) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'body' });
}

/** The body parsed as JSON, or undefined when it is not JSON. */
export function parseJson(response: HttpResponse): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    return undefined;
  }
}

const excerpt = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
const got = (response: HttpResponse): string => `${response.status} ${excerpt(response.text)}`;

/** A 501 whose Error object says `not_implemented`: the operation is a stub, reported as skipped. */
export function isNotImplemented(response: HttpResponse): boolean {
  return response.status === 501 && (parseJson(response) as { code?: unknown } | undefined)?.code === 'not_implemented';
}

/**
 * Checks one response against what the contract declares for the operation.
 *
 * @example checkResponse(contract, listPets, response) // [] when it conforms
 */
export function checkResponse(contract: Contract, operation: Operation, response: HttpResponse): CheckFailure[] {
  const failures: CheckFailure[] = [];
  if (response.status >= 500 && !isNotImplemented(response)) {
    failures.push({ check: 'not_a_server_error', expected: 'a status below 500', got: got(response) });
  }
  const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const isJson = /^application\/(.+\+)?json$/.test(contentType);
  const body = isJson ? parseJson(response) : undefined;
  const errorSchema = contract.errorSchema ?? ENGINE_ERROR;
  // What the server itself answers (a refusal, a stub's 501) is its Error object in JSON, whatever the document declares for that status.
  const isProblem = contentType === PROBLEM_JSON;
  const engineAnswer =
    response.status >= 400 &&
    isJson &&
    body !== undefined &&
    schemaErrors(isProblem ? PROBLEM : ENGINE_ERROR, body) === undefined &&
    (body as { status?: unknown }).status === response.status;
  const declared = declaredResponse(operation, response.status);
  if (!declared && !engineAnswer) {
    failures.push({
      check: 'status_code_conformance',
      expected: `one of ${Object.keys(operation.responses).join(', ')}`,
      got: got(response),
    });
  }

  for (const [name, header] of Object.entries(declared?.headers ?? {})) {
    const value = response.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required)
        failures.push({ check: 'response_headers_conformance', expected: `required header ${name}`, got: `${response.status} without ${name}` });
      continue;
    }
    const type = Array.isArray(header.schema.type) ? header.schema.type[0] : header.schema.type;
    const typed = type === 'integer' || type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
    const error = schemaErrors(header.schema, typed);
    if (error)
      failures.push({
        check: 'response_headers_conformance',
        expected: `header ${name} valid against its schema`,
        got: `${name}: ${value} (${error.replace(/^body/, name)})`,
      });
  }

  const mediaTypes = Object.keys(declared?.content ?? {});
  const media = mediaTypes.find((declaredType) => covers(declaredType, contentType));
  if (mediaTypes.length > 0 && media === undefined && !engineAnswer) {
    failures.push({
      check: 'content_type_conformance',
      expected: `Content-Type ${mediaTypes.join(' or ')}`,
      got: `${response.status} Content-Type: ${contentType || '(none)'}`,
    });
  }
  if (mediaTypes.length === 0 && declared && response.text.length > 0 && response.status < 400) {
    failures.push({ check: 'response_schema_conformance', expected: 'no body (none is declared)', got: got(response) });
  }

  const schema = media !== undefined && !(engineAnswer && !isJsonType(media)) ? declared?.content[media] : undefined;
  const sequential = media !== undefined && !engineAnswer ? sequentialFormat(contentType) : undefined;
  if (sequential) {
    // A stream: every item read and checked, as the list of items its schema describes (an empty stream is a valid one).
    const items = streamItems(sequential, response.text, schema);
    if (typeof items === 'string')
      failures.push({ check: 'response_schema_conformance', expected: `a ${contentType} stream`, got: `${items}: ${excerpt(response.text)}` });
    else if (schema) {
      const error = schemaErrors(schema, items);
      if (error)
        failures.push({
          check: 'response_schema_conformance',
          expected: `every item of the ${contentType} stream valid against its item schema`,
          got: `${response.status} ${error.replace(/^body\//, 'item ')}: ${excerpt(response.text)}`,
        });
    }
  } else if ((schema || response.status >= 400) && isJson && body === undefined) {
    failures.push({ check: 'response_schema_conformance', expected: 'a JSON body', got: got(response) });
  } else if (schema && isJson && body !== undefined && !(engineAnswer && declaredIsOtherError(schema, body))) {
    const error = schemaErrors(schema, body);
    if (error)
      failures.push({
        check: 'response_schema_conformance',
        expected: `body valid against the declared schema`,
        got: `${response.status} ${error}: ${excerpt(response.text)}`,
      });
  } else if (schema && contentType.startsWith('text/') && (schema.type === 'string' || schema.type === undefined)) {
    const error = schema.type === 'string' ? schemaErrors(schema, response.text) : undefined;
    if (error)
      failures.push({
        check: 'response_schema_conformance',
        expected: `text valid against the declared schema`,
        got: `${response.status} ${error}: ${excerpt(response.text)}`,
      });
  } else if (media !== undefined && !isJson && !contentType.startsWith('text/') && response.status < 300 && response.text.length === 0) {
    failures.push({ check: 'response_schema_conformance', expected: `a ${contentType} body`, got: `${response.status} with no body` });
  }
  // Every error is an Error object, declared or not, and says its own status; or problem details, where the document offers them.
  if (response.status >= 400 && isProblem && !contract.offersProblems) {
    failures.push({ check: 'content_type_conformance', expected: 'an Error object (the document declares no problem details)', got: got(response) });
  } else if (response.status >= 400) {
    const error = body === undefined ? 'not JSON' : schemaErrors(isProblem ? PROBLEM : errorSchema, body);
    if (error)
      failures.push({
        check: 'response_schema_conformance',
        expected: isProblem ? 'problem details (RFC 9457)' : 'an Error object',
        got: `${response.status} ${error}: ${excerpt(response.text)}`,
      });
    else if ((body as { status?: unknown }).status !== response.status) {
      failures.push({ check: 'response_schema_conformance', expected: `Error.status ${response.status}`, got: got(response) });
    }
  }
  return dedupe(failures);
}

/** The stream formats the fuzzer reads item by item, by media type. */
function sequentialFormat(contentType: string): 'sse' | 'jsonl' | 'json-seq' | undefined {
  if (contentType === 'text/event-stream') return 'sse';
  if (['application/jsonl', 'application/x-ndjson', 'application/x-jsonlines', 'application/jsonlines'].includes(contentType)) return 'jsonl';
  if (contentType === 'application/json-seq') return 'json-seq';
  return undefined;
}

/**
 * The items of a stream as sent, or what makes it unreadable: JSON Lines one
 * JSON text per line; JSON text sequences each after an RS (RFC 7464); Server-Sent
 * Events each event (comments, such as heartbeats, skipped) as an object of its
 * fields when the item schema describes objects, else its data.
 */
function streamItems(format: 'sse' | 'jsonl' | 'json-seq', text: string, schema: Schema | undefined): unknown[] | string {
  const items: unknown[] = [];
  if (format === 'sse') {
    // The item schema describes the event's fields, or else its data (JSON, or text): the engine's rule.
    const asEvents = describesEventFields(schema?.items);
    for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
      const event = readEvent(block);
      // Without data, an event carries no item of a data schema (nor does the engine's reader hand one over).
      if (event === undefined || (!asEvents && event.data === undefined)) continue;
      items.push(asEvents ? event : eventData(event.data!));
    }
    return items;
  }
  const records = format === 'jsonl' ? text.split('\n') : text.split('\u001e').slice(1);
  if (format === 'json-seq' && text.length > 0 && !text.startsWith('\u001e')) return 'a JSON text sequence starts with RS (0x1E)';
  for (const [index, record] of records.entries()) {
    if (format === 'jsonl' && record.trim() === '' && index === records.length - 1) continue;
    try {
      items.push(JSON.parse(record));
    } catch {
      return `${format === 'jsonl' ? 'line' : 'record'} ${index + 1} is not JSON`;
    }
  }
  return items;
}

/** The Error object `{code, message, status}` every failure the server itself answers is (the engine's rule). */
const ENGINE_ERROR: Schema = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
};

/** RFC 9457 problem details, as an error answer negotiated by `Accept: application/problem+json` must be (with the Error's `code`). */
const PROBLEM: Schema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, code: { type: 'string' } },
};
const PROBLEM_JSON = 'application/problem+json';

const isJsonType = (mediaType: string): boolean => /^application\/(.+\+)?json$/i.test(mediaType.split(';')[0]!.trim());

/** An engine Error object where the document declares another error shape: the server's own answer, not the handler's. */
const declaredIsOtherError = (schema: Schema, body: unknown): boolean => schemaErrors(schema, body) !== undefined;

/** Whether a declared media type (maybe a range: `image/*`, `*\/*`) covers the one received. */
function covers(declared: string, received: string): boolean {
  const [type, subtype] = declared.split(';')[0]!.trim().toLowerCase().split('/');
  const [receivedType, receivedSubtype] = received.split('/');
  return (type === '*' || type === receivedType) && (subtype === '*' || subtype === receivedSubtype);
}

/**
 * Checks that a response is what the case asked for: a declared 2xx for a
 * positive case (or 404 when its path named an id the server may not have),
 * an expected 4xx for a negative or auth case.
 */
/**
 * Refusals a request valid against the schemas may still get, when the
 * operation declares them: 403 (the caller's role may not), and, for a
 * request that names a resource (an item path, or a body property named as
 * an item path's parameter), 404 (it does not exist) and 409 (its state
 * forbids it). A 400 or 422 is never one: valid data must be accepted.
 */
const ROLE_REFUSALS = ['403'];
const STATE_REFUSALS = ['404', '409'];
/** Refusals of a conditional write whose current tag the fuzzer could not read (it sent none, or one from the schema). */
const CONDITION_REFUSALS = ['412', '428'];

export function checkOutcome(
  test: Case,
  response: HttpResponse,
  resourceMayBeMissing: boolean,
  { tagUnknown = false, namesResource = false }: { tagUnknown?: boolean; namesResource?: boolean } = {},
): CheckFailure[] {
  const { operation } = test;
  if (response.status >= 500) return []; // already not_a_server_error
  if (test.kind === 'positive') {
    const declared2xx = Object.keys(operation.responses).filter((status) => /^2/.test(status));
    const sent = (name: string) =>
      operation.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === name && test.input.params[p.name] !== undefined);
    const refusals = [
      ...ROLE_REFUSALS,
      ...(namesResource ? STATE_REFUSALS : []),
      ...(tagUnknown ? CONDITION_REFUSALS : []),
      // A tag the client holds may be the current one: then the read is a 304 (RFC 9110 13.1.2).
      ...(sent('if-none-match') ? ['304'] : []),
      // A key the run sent before with another request (draft-ietf-httpapi-idempotency-key-header: 422).
      ...(sent('idempotency-key') ? ['422'] : []),
    ].filter((status) => status in operation.responses);
    // The server refuses NUL and unpaired surrogates in JSON bodies whatever the schema allows (a rule of its own, documented): a 400 then.
    const refusedText = response.status === 400 && (operation.body?.kind === 'json' || operation.body?.kind === 'items') && holdsRefusedText(test.input.body);
    const ok =
      declared2xx.includes(String(response.status)) ||
      declared2xx.includes('2XX') ||
      refusals.includes(String(response.status)) ||
      (resourceMayBeMissing && response.status === 404) ||
      refusedText;
    if (ok) return [];
    const also = [...refusals, ...(resourceMayBeMissing && !refusals.includes('404') ? ['404'] : [])];
    return [
      {
        check: 'positive_data_acceptance',
        expected: `a declared 2xx (${declared2xx.join(', ') || 'none declared'})${also.length ? ` or ${also.join(', ')}` : ''}`,
        got: got(response),
      },
    ];
  }
  const expected = test.expectedStatuses ?? [];
  if (expected.includes(response.status)) return [];
  const check = test.kind === 'auth' ? 'ignored_auth' : test.kind === 'method' ? 'unsupported_method' : 'negative_data_rejection';
  return [{ check, expected: `${expected.join(' or ')} (never a 2xx)`, got: got(response) }];
}

/** Whether a value holds a string with NUL or an unpaired UTF-16 surrogate. */
function holdsRefusedText(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
  if (Array.isArray(value)) return value.some(holdsRefusedText);
  return value !== null && typeof value === 'object' && Object.values(value).some(holdsRefusedText);
}

function dedupe(failures: CheckFailure[]): CheckFailure[] {
  const seen = new Set<string>();
  return failures.filter((failure) => {
    const key = `${failure.check}|${failure.expected}|${failure.got}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
