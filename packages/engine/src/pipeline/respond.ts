import type { Request, Response } from 'express';
import type { SpecOperation } from '../contract/document';
import { covers, essence, mediaKind, negotiate } from '../contract/media-types';
import { isStub } from '../handlers/stub';
import { ApiError, noSuchRoute, notImplemented } from '../errors/api-error';
import type { OperationMock } from '../mock/mock-responses';
import { parsePrefer } from '../mock/prefer-header';
import type { StatefulOperation } from '../mock/stateful-mock';
import { itemFormat, readToEnd } from '../request/items';
import type { Representations } from '../response/representations';
import { sendBody } from '../response/send-body';
import { sendJson } from '../response/send-json';
import { isItemSource, sendItems, sequentialFormat, type ItemSource } from '../response/sequential';
import type { SchemaValidator } from '../contract/schemas';
import type { Stage } from '../stage/stage';
import { contextOf, type OutgoingResponse, type StreamRecord } from '../context/request-context';
import {
  isRetrieval,
  isSafeMethod,
  NO_PRECONDITIONS,
  tagOf,
  type ConditionalFacts,
  type Preconditions,
  type RequestConditions,
} from '../conditions/preconditions';
import { formatTag } from '../conditions/entity-tags';
import { asErrorBody } from '../errors/api-error';
import { sendError } from '../response/send-error';

/**
 * What a handler receives: the validated request of its operation. Typed per
 * operation by the generated code (src/handlers/types.ts).
 */
export interface HandlerInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  cookies: Record<string, unknown>;
  body: unknown;
  /** The declared request media type the body was sent as; undefined without a body. */
  mediaType: string | undefined;
  /** The media type the client accepts best among those the successful responses declare. */
  accept: string | undefined;
  /** The `Last-Event-ID` a Server-Sent Events client sends when it reconnects: where to resume. */
  lastEventId: string | undefined;
  /** Aborted when the client goes away before the answer is sent (a stream's handler stops waiting for its next item). */
  signal: AbortSignal;
  /** The request's `If-Match` / `If-None-Match`: a write's handler checks them against the version it is about to change. */
  conditions: Preconditions;
}

export interface HandleOptions {
  /** What handlers may use besides the request (the caller is added per request). */
  context: object;
  /** Mock mode: the example answers of the stubbed operations (`npm run mock`), of every operation in stateful mode. */
  mocks?: ReadonlyMap<string, OperationMock>;
  /**
   * Stateful mock mode (`npm run mock -- --stateful`): every operation is
   * answered by the mock, handlers or not; those paired as collection and
   * item from memory, the rest with their examples.
   */
  stateful?: ReadonlyMap<string, StatefulOperation>;
  /** The operation declares a stream (a sequential media type): its handler gets a signal aborted when the client goes away. */
  streams?: boolean;
}

/** A handler as the engine calls it: the registry was type-checked against the contract where it is declared. */
type AnyHandler = (request: HandlerInput, context: object) => Promise<OutgoingResponse>;

const NONE: Readonly<Record<string, unknown>> = Object.freeze({});
/** The signal of an operation that does not stream: its answer is sent at once, so there is nothing to stop. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * The handle phase of one operation: calls its handler with the validated
 * request and keeps the response it returns for the serialize phase. A stub
 * (`notImplementedHandler`) is answered here: 501 `not_implemented`, or in
 * mock mode an example from the contract; in stateful mock mode every
 * operation is answered by the mock. Either way the request has already
 * been authenticated, counted and validated.
 *
 * @example stages.push(handleStage(op, handlers[op.operationId], { context }));
 */
export function handleStage(op: SpecOperation, entry: unknown, options: HandleOptions): Stage {
  // In stateful mode the mock answers every operation: state shared between real handlers and a mock would not hold together.
  if (options.stateful) return mockStage(op, options);
  if (entry === undefined) {
    // An operation of a contract this registry was not generated from (tests that edit the contract): not served.
    return () => {
      throw noSuchRoute();
    };
  }
  if (isStub(entry)) return mockStage(op, options);
  const handler = entry as AnyHandler;
  const shared = options.context;
  const streams = options.streams === true;
  return async (req, res) => {
    const context = contextOf(req);
    const { parameters } = context;
    const input: HandlerInput = {
      params: parameters?.path ?? NONE,
      query: parameters?.query ?? NONE,
      headers: parameters?.header ?? NONE,
      cookies: parameters?.cookie ?? NONE,
      body: req.body,
      mediaType: context.received?.mediaType,
      accept: context.preferredMediaType,
      lastEventId: req.headers['last-event-id'] as string | undefined,
      signal: streams ? clientGone(res) : NEVER_ABORTED,
      conditions: context.conditions ?? NO_PRECONDITIONS,
    };
    context.answer = await handler(input, { ...shared, caller: context.caller });
  };
}

/**
 * A stub's answer: 501 `not_implemented`, or in mock mode the stored state of
 * a paired operation (stateful mode, unless `Prefer` asks for an example),
 * else an example from the contract. A body of items is read to its end
 * first, so a bad item gets the 400 the implemented operation would give.
 */
function mockStage(op: SpecOperation, options: HandleOptions): Stage {
  const { operationId } = op;
  const mock = options.mocks?.get(operationId);
  const paired = options.stateful?.get(operationId);
  return async (req) => {
    const context = contextOf(req);
    if (context.received !== undefined && itemFormat(context.received.mediaType) !== undefined) await readToEnd(req.body as AsyncIterable<unknown>);
    const prefer = req.get('prefer');
    const asked = parsePrefer(prefer);
    let response: OutgoingResponse | undefined;
    let kind = 'example';
    if (paired && asked.code === undefined && asked.example === undefined) {
      const { parameters } = context;
      response = paired.answer({
        params: parameters?.path ?? NONE,
        query: parameters?.query ?? NONE,
        body: req.body,
        mediaType: context.received?.mediaType,
        path: req.path,
        conditions: context.conditions ?? NO_PRECONDITIONS,
      });
      if (response) kind = 'stateful';
    }
    try {
      response ??= mock?.answer(prefer, req.headers.accept);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // A bad Prefer header is the framework's 400, declared or not.
      context.answer = { status: error.status, headers: { ...error.headers }, body: error.toBody(), direct: true };
      return;
    }
    if (!response) throw new ApiError(501, 'not_implemented', notImplemented(operationId).message);
    // An example is no stored version: there is nothing its conditions could be checked against.
    if (kind === 'example') context.conditions = undefined;
    // Rate-limit and deprecation headers are already set; declared headers they do not cover get examples.
    const headers = Object.fromEntries(Object.entries(response.headers ?? {}).filter(([name]) => !context.responseHeaders.has(name)));
    // Says where the answer comes from: the contract's example (a client, or the contract fuzzer, reads nothing back from it) or the mock's memory.
    headers['X-Mock'] = kind;
    context.answer = { ...response, headers };
  };
}

/** A signal aborted when the response closes before it finished: the client went away. */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * The serialize phase of one operation: writes the response the handle phase
 * produced, in its media type (JSON, or the only one its status declares,
 * when the handler does not name one). A successful answer in a media type
 * the client's `Accept` refuses is a 406. With strict response validation a
 * JSON body goes through `res.json`, which the validator intercepts;
 * otherwise it is written directly: a handler's body is already typed from
 * the contract, every response of the test suite is checked against it, and
 * in production a share of them is checked after it is sent
 * (src/pipeline/response-sampling.ts).
 *
 * A body in a sequential media type (SSE, JSON Lines, JSON text sequences)
 * given as an iterable of items is streamed (see `sendStream`).
 *
 * @example stages.push(serializeStage(representations(spec, op), { validateResponses: config.validateResponses, streams }));
 */
export function serializeStage(declared: Representations, options: SerializeOptions): Stage {
  const { validateResponses, streams, conditional, problems = false } = options;
  return (req, res) => {
    const context = contextOf(req);
    let answer = context.answer;
    if (!answer) throw new Error(`the handle phase produced no response for ${req.method} ${req.path}`);
    if (answer.status >= 400 && problems) {
      const error = asErrorBody(answer.body);
      if (error) return sendError(res, req.headers.accept, true, answer.status, error, answer.headers);
    }
    if (answer.etag !== undefined || context.conditions !== undefined) {
      answer = conditionalAnswer(req.method, answer, context.conditions, conditional);
      if (answer.status === 304) return sendJson(res, 304, undefined, answer.headers);
    }
    if (answer.body === undefined || answer.direct) {
      if (validateResponses && !answer.direct) return sendThroughValidator(res, answer);
      return sendJson(res, answer.status, answer.body, answer.headers);
    }
    const mediaType = mediaTypeOf(answer, declared.preferred(answer.status));
    if (answer.status < 300 && req.headers.accept !== undefined && negotiate([mediaType], req.headers.accept) === undefined) {
      throw new ApiError(406, 'not_acceptable', `Accept does not allow ${mediaType}, the media type of this answer`);
    }
    if (declared.streams && sequentialFormat(mediaType) !== undefined && isItemSource(answer.body)) {
      if (!streams) throw new Error(`${req.method} ${req.path} answers a stream, but this server was composed without stream settings`);
      return sendStream(req, res, declared, mediaType, answer, validateResponses, streams);
    }
    if (validateResponses && mediaKind(mediaType) === 'json' && declared.hasSchema(answer.status, mediaType)) return sendThroughValidator(res, answer);
    return sendBody(res, answer.status, mediaType, answer.body, answer.headers);
  };
}

/**
 * An answer with its version: `ETag` on a success, and 304 for a read whose
 * `If-None-Match` names it (when the operation declares 304). A write that
 * succeeded without its handler checking the request's conditions is a bug
 * of that handler, never answered as if they held.
 */
function conditionalAnswer(
  method: string,
  answer: OutgoingResponse,
  conditions: RequestConditions | undefined,
  facts: ConditionalFacts | undefined,
): OutgoingResponse {
  if (answer.status < 200 || answer.status >= 300) return answer;
  if (conditions?.present && !conditions.checked && !isSafeMethod(method)) {
    throw new Error(`${method} answered ${answer.status} without checking If-Match / If-None-Match (request.conditions.check)`);
  }
  // A read without a version answers in full: there is nothing to compare.
  if (answer.etag === undefined) return answer;
  const tag = tagOf(answer.etag);
  const headers = facts?.etagStatuses.has(answer.status) ? { ...answer.headers, ETag: formatTag(tag) } : answer.headers;
  // notModified first: it also evaluates a read's If-Match (412).
  if (conditions !== undefined && isRetrieval(method) && conditions.notModified(tag) && facts?.notModified) return { status: 304, headers };
  return { ...answer, headers };
}

export interface SerializeOptions {
  /** The operation's conditional-request facts (src/conditions/preconditions.ts). */
  conditional?: ConditionalFacts;
  /** The document declares problem details: error answers are negotiated by `Accept`. */
  problems?: boolean;
  /** Strict mode (VALIDATE_RESPONSES=true): every response is checked before it is sent, every item of a stream too. */
  validateResponses: boolean;
  /** How streamed answers (sequential media types) are sent and their items checked. */
  streams?: StreamSettings;
}

/** What every stream of a version shares. */
export interface StreamSettings {
  /** The version's schemas, in the response direction: each item is checked against its item schema. */
  schemas: SchemaValidator;
  /** SSE: the idle time after which a heartbeat comment keeps the stream open. */
  heartbeatMs: number;
  /** The longest a client may leave a full socket unread before its stream is cut. */
  stallMs: number;
  /** The longest a stream may last before it is cut. */
  maxDurationMs: number;
  /** Aborted when the server shuts down (open SSE streams end; their clients reconnect). */
  shutdown: AbortSignal;
  /** An item that breaks its schema (counted and logged by the service). */
  invalidItem(req: Request, index: number, problem: string): void;
  /** A stream the server cut: its reader left the socket full too long (`stalled`), or it lasted too long (`max_duration`). */
  cut(req: Request, reason: 'stalled' | 'max_duration'): void;
}

/**
 * A handler's items sent as a stream (src/response/sequential.ts),
 * each checked against its item schema in strict mode (an invalid one ends
 * the stream) and when the request is sampled (it is reported, and sent).
 */
async function sendStream(
  req: Request,
  res: Response,
  declared: Representations,
  mediaType: string,
  answer: OutgoingResponse,
  strict: boolean,
  settings: StreamSettings,
): Promise<void> {
  const context = contextOf(req);
  const record: StreamRecord = { items: 0, bytes: 0, end: undefined, error: undefined };
  context.stream = record;
  const pointer = strict || context.sampled ? declared.itemSchema(answer.status, mediaType) : undefined;
  const checkItem = pointer === undefined ? undefined : (item: unknown): string | undefined => settings.schemas.explain(pointer, item);
  const sending = sendItems(res, answer.status, mediaType, answer.body as ItemSource, answer.headers, {
    checkItem,
    ...(sequentialFormat(mediaType) === 'sse' && { itemsAreEvents: declared.itemsAreEvents(answer.status, mediaType) }),
    strict,
    onInvalidItem: (index, problem) => settings.invalidItem(req, index, problem),
    heartbeatMs: settings.heartbeatMs,
    stallMs: settings.stallMs,
    maxDurationMs: settings.maxDurationMs,
    tally: context.streamItems,
    shutdown: settings.shutdown,
    record,
  });
  try {
    await sending;
  } catch (error) {
    // Failed before its first item: nothing was streamed, and the error mapper answers an Error object.
    context.stream = undefined;
    throw error;
  }
  if (record.end === 'stalled' || record.end === 'max_duration') settings.cut(req, record.end);
}

/** The concrete media type an answer is sent as. */
function mediaTypeOf(answer: OutgoingResponse, preferred: string | undefined): string {
  const named = answer.mediaType ?? preferred ?? (typeof answer.body === 'string' ? 'text/plain' : 'application/json');
  if (!named.includes('*')) return essence(named);
  // A range (`image/*`): the Blob's own type, when it falls in it.
  const own = answer.body instanceof Blob ? answer.body.type : '';
  if (own && covers(named, own)) return essence(own);
  throw new Error(`a ${answer.status} answer declared as ${named} must name its concrete media type (mediaType, or a Blob with a type)`);
}

function sendThroughValidator(res: Response, response: OutgoingResponse): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}

export type { Request };
