import type { Request } from 'express';
import type { MediaKind } from '../contract/media-types';
import type { ApiError, ErrorBody } from '../errors/api-error';
import { ResponseHeaders } from './response-headers';
import type { RequestConditions } from '../conditions/preconditions';

/**
 * Who called: what the user's credential check makes of a verified
 * credential. The user's own caller type extends it (a plan, limits), as the
 * type argument of `createEngine` and `contextOf`; the engine only carries it
 * to the rate limits and the handler.
 *
 * @example interface Member extends Principal { readonly plan: 'free' | 'pro' }
 */
export interface Principal {
  /** Stable across requests, restarts and instances: what rate limits, bans and idempotency records are keyed by. */
  readonly principal: string;
}

/** The operation's parameters once deserialized, coerced to their schema types and validated. */
export interface RequestParameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  cookie: Record<string, unknown>;
}

/** A body as the handler receives it, with the declared media type it was sent as. */
export interface ReceivedBody {
  /** The key of the operation's `requestBody.content` the request's Content-Type selected (`application/json`, `image/*`). */
  mediaType: string;
  /** The media type the client sent, without parameters (`image/png`). */
  sentAs: string;
  kind: MediaKind;
}

/** What is sent: a handler's response, or a mock's. */
export interface OutgoingResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The media type of `body`, one the contract declares for `status`; JSON (or the only declared type) when omitted. */
  mediaType?: string;
  /**
   * The version of what the answer returns, as an entity tag's opaque part
   * (or a whole tag, `W/"…"`): the engine sends it as `ETag` and answers a
   * read whose `If-None-Match` names it 304.
   */
  etag?: string;
  /**
   * Written as it is, never judged by response validation: the framework's
   * own answers, such as a stub's 400 for a bad `Prefer` header.
   */
  direct?: boolean;
}

/** How a stream ended, as the access log and the metrics tell it. */
export type StreamEnd = 'complete' | 'client_closed' | 'failed' | 'invalid_item' | 'shutdown' | 'stalled' | 'max_duration';

/** What one stream did, for the access log: items and bytes sent, and how it ended. */
export interface StreamRecord {
  items: number;
  bytes: number;
  end: StreamEnd | undefined;
  /** What made it fail (`end: 'failed'`), for the log. */
  error: unknown;
}

/**
 * What the phases of one request tell each other, made once per request (by
 * `observe`, the first phase) and read through `contextOf`. Each field says
 * which phase writes it and which read it, in the order of
 * src/pipeline/phases.ts. Every field exists from the start, so every
 * context has the same shape.
 *
 * @example const context = contextOf(req); if (context.caller) context.caller.principal;
 */
export class RequestContext<Caller extends Principal = Principal> {
  /** The operationId (or fixed route name) of the request. Written by the route's operation facts (or the observer, for routes outside the contract); read by the metrics, the access log and the error mapper. */
  operationName: string | undefined = undefined;
  /** The major version (`v1`) the request is for. Written with `operationName`; read by the same. */
  apiVersion: string | undefined = undefined;
  /** The path parameters as the route table found them, not decoded. Written by `route`; read by `parameters`. */
  rawPathParams: Readonly<Record<string, string>> | undefined = undefined;
  /** Who called, once a credential verified. Written by `authenticate`; read by `rate-limit`, `handle` and the access log. */
  caller: Caller | undefined = undefined;
  /** Why the request is refused (401, 403, 503). Written by `authenticate`; read by `rate-limit` (which counts it first) and answered by `require-caller`. */
  authFailure: ApiError<string> | undefined = undefined;
  /** The operation's parameters, typed and validated. Written by `parameters`; read by `handle`. */
  parameters: RequestParameters | undefined = undefined;
  /** The body's declared media type, when the request has a body. Written by `body`; read by `validate` and `handle`. */
  received: ReceivedBody | undefined = undefined;
  /** The files of a multipart body, by field name. Written by `body`; put into the body by `validate`. */
  uploads: Map<string, File[]> | undefined = undefined;
  /** The media type the client accepts best among the successful responses'. Written by `negotiate`; read by `handle`. */
  preferredMediaType: string | undefined = undefined;
  /** The request's `If-Match` / `If-None-Match`, when its operation declares them. Written by `preconditions`; read by `handle` (the handler checks them) and `serialize` (304, and a write that skipped its check). */
  conditions: RequestConditions | undefined = undefined;
  /** Counts the items a stream sends or receives, which weigh in the caller's rate limits. Written by `stream-admission`; called by the body's item reader (during `handle`) and by `serialize`. */
  streamItems: ((items: number) => void) | undefined = undefined;
  /** The response the handler (or a mock) produced. Written by `handle`; read by `serialize` and the access log. */
  answer: OutgoingResponse | undefined = undefined;
  /** The Error object the request was refused with, as the access log tells it. Written by the error mapper; read by the access log. */
  refusal: ErrorBody | undefined = undefined;
  /** Whether this request's response is checked against the contract (VALIDATE_RESPONSES as a fraction). Written by `observe`; read by `serialize` (a stream's items are checked as they are sent). */
  sampled = false;
  /** What a streamed answer sent, and how it ended. Written by `serialize`; read by the access log and the metrics. */
  stream: StreamRecord | undefined = undefined;
  /**
   * The response's headers, sent with its status in one `writeHead`. Written by every phase that sets one (the
   * request id, helmet's, the deprecation and rate-limit headers) and by the writers of the answer; read by the
   * access log (`Content-Length`) and the response checks.
   */
  readonly responseHeaders = new ResponseHeaders();
}

// The one augmentation of Express's Request.
declare module 'express-serve-static-core' {
  interface Request {
    /** What the phases of this request tell each other (read it through `contextOf`). */
    context?: RequestContext;
    /** This request's id, echoed in `X-Request-Id`: the client's when it is safe, else a new UUID. */
    id: string;
  }
}

/**
 * The request's context, made on first use: the observe phase makes it first,
 * and code that runs without the pipeline (an error mapper mounted alone)
 * still gets one. The type argument is the user's caller type.
 *
 * @example const { caller, operationName } = contextOf<Member>(req);
 */
export function contextOf<Caller extends Principal = Principal>(req: Request): RequestContext<Caller> {
  let context = req.context;
  if (context === undefined) {
    context = new RequestContext();
    req.context = context;
  }
  return context as RequestContext<Caller>;
}
