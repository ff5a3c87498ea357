import type { OpenApiDocument, SpecOperation } from './document';
import Ajv, { type ErrorObject } from 'ajv';
import { mediaKind, selectDeclared } from './media-types';
import { schemaValidator } from './schemas';
import { deref, escapePointer, resolveRef } from './refs';

/** What a response can get wrong: a fixed set (the `kind` label of `pas_contract_violations_total`). */
export const VIOLATION_KINDS = ['status', 'header', 'body'] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** One way a response breaks the contract, with a readable explanation. */
export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
}

/** A response as the client got it. */
export interface SentResponse {
  /** Upper case. */
  readonly method: string;
  readonly status: number;
  /** Names in lower case. */
  readonly headers: Readonly<Record<string, unknown>>;
  /** The body parsed as JSON; undefined when there is none or it is not JSON. */
  readonly body: unknown;
  /** The body as sent; empty when there is none. */
  readonly text: string;
}

/**
 * Checks one response of an operation (`undefined`: a request that matched
 * no operation, whose errors must still be Error objects); at most one
 * violation per kind, the first found, in the order status, header, body.
 */
export type ResponseCheck = (operation: SpecOperation | undefined, response: SentResponse) => Violation[];

/**
 * 400 request validation, 401 and 403 auth, 406 negotiation, 410 sunset,
 * 413/415 body, 414 URL, 429 limits, 501 stubs, 503 outages: the engine's
 * answers, not the handler's. They need not be declared, and whatever the
 * document says of them, they are Error objects.
 */
const FRAMEWORK_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 406, 410, 413, 414, 415, 429, 501, 503]);

/** The Error object every engine answer is (`{code, message, status}`). */
const ENGINE_ERROR = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: { code: { type: 'string', minLength: 1 }, message: { type: 'string' }, status: { type: 'integer', minimum: 400, maximum: 599 } },
};

/**
 * The one rule of what a response of the contract must be, by which
 * sampled production responses are judged (`responseSampleRate`):
 * the operation's declared response for the status (or `default`, for
 * errors only) gives the required headers, the integer headers and the body
 * schema; errors carry their HTTP status in `status`. Schemas are compiled on
 * first use.
 *
 * @example
 * const check = responseConformance(spec);
 * check(undefined, { method: 'GET', status: 404, headers: { 'content-type': 'application/json' }, body: { error: 'nope' }, text: '{"error":"nope"}' })
 * // [{ kind: 'body', message: "data must have required property 'code', ..." }]
 */
export function responseConformance(contract: OpenApiDocument): ResponseCheck {
  const schemas = schemaValidator(contract, { direction: 'response', allErrors: true });
  const engineError = new Ajv({ allErrors: true }).compile(ENGINE_ERROR);

  const bodyProblem = (schemaPointer: string | undefined, response: SentResponse): Violation[] => {
    if (response.method === 'HEAD') return []; // no body, whatever the status
    const type = response.headers['content-type'];
    if (mediaKind(String(type ?? '')) !== 'json') return [{ kind: 'body', message: `content-type is ${type}` }];
    const problem =
      schemaPointer === undefined
        ? engineError(response.body)
          ? undefined
          : `not an Error object: ${ajvText(engineError.errors)}`
        : schemas.explain(schemaPointer, response.body);
    if (problem) return [{ kind: 'body', message: problem }];
    const status = (response.body as { status?: unknown } | null)?.status;
    if (response.status >= 400 && status !== response.status) return [{ kind: 'body', message: `body.status ${status} differs from the HTTP status` }];
    return [];
  };

  return (operation, response) => {
    if (!operation) return response.status >= 400 ? bodyProblem(undefined, response) : [];
    const responses = operation.operation['responses'] as Record<string, unknown>;
    const declared = String(response.status) in responses ? String(response.status) : 'default';
    const framework = FRAMEWORK_STATUSES.has(response.status);
    if (!(declared in responses)) {
      if (!framework) return [{ kind: 'status', message: 'status is not declared and there is no default response' }];
      return bodyProblem(undefined, response);
    }
    if (declared === 'default' && response.status < 400) {
      return [{ kind: 'status', message: `a ${response.status} is not declared: only errors may fall to the default response` }];
    }
    const { node: declaration, ref } = resolveRef(contract, responses[declared]);
    const violations: Violation[] = [];
    const header = headerProblem(contract, declaration, response);
    if (header) violations.push({ kind: 'header', message: header });
    const content = declaration['content'] as Record<string, unknown> | undefined;
    // An engine answer the document declares without a JSON body (`400: Invalid ID supplied`) is still an Error object.
    if (framework && !Object.keys(content ?? {}).some((mediaType) => mediaKind(mediaType) === 'json'))
      return [...violations, ...bodyProblem(undefined, response)];
    if (!content) {
      if (response.text) violations.push({ kind: 'body', message: 'no content is declared but the response has a body' });
      return violations;
    }
    if (response.method === 'HEAD') return violations;
    const sent = String(response.headers['content-type'] ?? '');
    const mediaType = sent === '' ? undefined : selectDeclared(Object.keys(content), sent);
    if (mediaType === undefined)
      return [
        ...violations,
        { kind: 'body', message: `content-type ${sent || '(none)'} is not declared for ${declared} (declared: ${Object.keys(content).join(', ')})` },
      ];
    // Bytes and text are checked for their media type only; JSON against its schema.
    if (mediaKind(mediaType) !== 'json' || (content[mediaType] as { schema?: unknown } | undefined)?.schema === undefined) return violations;
    // Where the response object lives, so Ajv resolves its schema's $refs in place.
    const pointer = ref ? ref.replace(/^#/, '') : `${operation.pointer}/responses/${declared}`;
    return [...violations, ...bodyProblem(`${pointer}/content/${escapePointer(mediaType)}/schema`, response)];
  };
}

/** The first declared header that is required and missing, or declared an integer and not one. */
function headerProblem(contract: OpenApiDocument, declaration: Record<string, unknown>, response: SentResponse): string | undefined {
  for (const [name, header] of Object.entries(declaration['headers'] ?? {})) {
    const definition = deref(contract, header) as { required?: boolean; schema?: { type?: string } };
    const value = response.headers[name.toLowerCase()];
    if (definition.required && value === undefined) return `required header ${name} is missing`;
    if (value !== undefined && definition.schema?.type === 'integer' && !/^\d+$/.test(String(value))) return `header ${name}: "${value}" is not an integer`;
  }
  return undefined;
}

const ajvText = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((error) => `${error.instancePath || 'data'} ${error.message}`).join(', ');
