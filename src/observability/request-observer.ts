import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from './metrics';
import { contextOf, type Stage } from '@spec-first/engine';
import type { Caller } from '../service/keys';

/** nginx's "client closed request": the client went away before the response was sent. */
const CLIENT_CLOSED = 499;

/** Requests outside every version's base path (public routes, unknown paths). */
const NO_VERSION = 'none';

/** HTTP methods reported as themselves (the eight of OpenAPI 3.1's path items); any other is `other`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']);

/** A method label from a fixed set. @example methodLabel('PROPFIND') // 'other' */
const methodLabel = (method: string): string => (KNOWN_METHODS.has(method) ? method : 'other');

/** A client chooses its URL: the logged path is cut, so a line stays small. */
const MAX_LOGGED_PATH = 256;

/** The request path, without the query string (it may carry what people searched for). */
function loggedPath(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}

/** The Error object a handler answered with, or undefined when its body is not one. */
function errorObjectOf(body: unknown): { code: string; message: string } | undefined {
  const { code, message } = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' && typeof message === 'string' ? { code, message } : undefined;
}

export interface RequestObserverOptions {
  metrics: Metrics;
  /** Writes the access-log line (at info); omitted when info is off. */
  accessLog?: Logger;
}

/**
 * One listener per request, on the response's `close` (emitted after the last
 * byte is handed to the socket, or when the client goes away first), records
 * the request in the duration histogram and writes the access-log line (with
 * the other lines of that turn of the event loop, once it ends):
 *
 * `{"level":30,"requestId":"…","method":"GET","path":"/v1/pets","operation":"listPets","version":"v1","status":200,
 *   "durationMs":1.8,"responseBytes":812,"keyId":4,"plan":"free","ip":"127.0.0.1","msg":"request"}`
 *
 * A refusal (4xx, 5xx) also carries its Error object's `code` as `reason` and
 * its message as `detail` (which rule, which window, which scope), so "why was
 * request X refused?" is one search by request id. Never the key, the
 * Authorization header, the query string or a body. `responseBytes` is the
 * body's Content-Length (absent for a streamed body; a stream of items logs
 * `stream: {items, bytes, end}` instead, sent when it ends). One line per request is
 * cheaper than pino-http's serializers and child loggers.
 *
 * @example const observe = requestObserver({ metrics, accessLog: logger });
 */
export function requestObserver({ metrics, accessLog }: RequestObserverOptions): Stage {
  // The access lines of one turn of the event loop are written together once
  // it ends (setImmediate), in the order their requests closed: written one
  // at a time between requests, pino's serialization of a line cost about
  // twice what it costs in a run of them.
  const lines: object[] = [];
  const writeLines = (): void => {
    for (const line of lines) accessLog?.info(line, 'request');
    lines.length = 0;
  };
  // One batched series per label set, found through a map per label: the
  // labels come from fixed sets (operations, versions, statuses, methods).
  const series = new Map<string, Map<string, Map<number, Map<string, { observe(seconds: number): void }>>>>();
  const seriesOf = (operation: string, version: string, status: number, method: string): { observe(seconds: number): void } => {
    const ofOperation = series.get(operation) ?? setNew(series, operation);
    const ofVersion = ofOperation.get(version) ?? setNew(ofOperation, version);
    const ofStatus = ofVersion.get(status) ?? setNew(ofVersion, status);
    let found = ofStatus.get(method);
    if (!found) {
      found = metrics.batched.histogramSeries(metrics.requestDuration, { operation, method, status, version });
      ofStatus.set(method, found);
    }
    return found;
  };
  const record = (req: Request, res: Response, startedAt: number): void => {
    const durationMs = performance.now() - startedAt;
    const status = res.headersSent ? res.statusCode : CLIENT_CLOSED;
    const context = contextOf<Caller>(req);
    const operation = context.operationName ?? 'unmatched';
    const version = context.apiVersion ?? NO_VERSION;
    const method = methodLabel(req.method);
    seriesOf(operation, version, status, method).observe(durationMs / 1000);
    const { stream } = context;
    if (stream) {
      metrics.streams.inc({ operation, end: stream.end ?? 'client_closed' });
      metrics.streamItems.inc({ operation }, stream.items);
    }
    if (!accessLog) return;
    // The engine's answers record their headers; Express's own (health, metrics, docs) keep them on the response.
    const length = context.responseHeaders.get('content-length') ?? res.getHeader('content-length');
    // Thrown refusals went through the error mapper; a handler's own (404, a bad cursor) are in its answer.
    const refusal = status >= 400 ? (context.refusal ?? errorObjectOf(context.answer?.body)) : undefined;
    const { caller } = context;
    lines.push({
      requestId: req.id,
      method: req.method,
      path: loggedPath(req),
      operation,
      version,
      status,
      durationMs: Math.round(durationMs * 100) / 100,
      responseBytes: length === undefined ? undefined : Number(length),
      keyId: caller?.keyId,
      // A caller without a key (an access token) is named by its principal.
      ...(caller && caller.keyId === undefined && { principal: caller.principal }),
      plan: caller?.plan,
      // Express reads the address from the socket, which is gone when the connection closed first (a body cut off by a 413).
      ip: req.socket ? req.ip : undefined,
      ...(refusal && { reason: refusal.code, detail: refusal.message }),
      // A stream: what it sent and how it ended (a failure's cause is logged with the request id).
      ...(stream && {
        stream: { items: stream.items, bytes: stream.bytes, end: stream.end ?? 'client_closed' },
        ...(stream.error !== undefined && { err: stream.error }),
      }),
      ...(res.writableFinished ? {} : { aborted: true }),
    });
    if (lines.length === 1) setImmediate(writeLines);
  };
  return (req, res) => {
    const startedAt = performance.now();
    res.once('close', () => record(req, res, startedAt));
  };
}

/** A new empty map under `key` of `parent`. */
function setNew<K, V extends Map<unknown, unknown>>(parent: Map<K, V>, key: K): V {
  const made = new Map() as V;
  parent.set(key, made);
  return made;
}
