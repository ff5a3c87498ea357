import { ServerResponse } from 'node:http';
import type { Request } from 'express';

/** Header names as written, by the lower-case name that identifies them; bounded, since a client never chooses a name. */
const LOWER_CASE = new Map<string, string>();
const LOWER_CASE_KEPT = 1_024;

function lowerCase(name: string): string {
  let lower = LOWER_CASE.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (LOWER_CASE.size < LOWER_CASE_KEPT) LOWER_CASE.set(name, lower);
  }
  return lower;
}

/** One header's value; a list is the header repeated (`Set-Cookie`). */
export type HeaderValue = string | string[];

/** Headers a response usually carries (helmet's, the request id, the rate-limit and deprecation headers, the writer's). */
const USUAL_HEADERS = 32;

/** What `writeHead` takes besides the status: a flat list, a list of pairs, or an object. */
type HeadersArgument =
  | readonly HeaderValue[]
  | ReadonlyArray<readonly [string, HeaderValue]>
  | Readonly<Record<string, string | number | string[] | undefined>>;

/**
 * The headers the phases of one request set on its response, in the order
 * they were set, a later value of a name (in any case) replacing the earlier
 * one. They reach the client with the status in one `writeHead(status, list)`
 * (see `writeRecordedHeaders`): Node then writes the head straight from the
 * list, where each `setHeader` would first file the header in a dictionary
 * of its own, per response, that the engine never reads back.
 *
 * @example contextOf(req).responseHeaders.set('X-Request-Id', id);
 */
export class ResponseHeaders {
  /** Room for the headers a response usually carries, made once: the lists are not regrown as the phases add theirs. */
  private readonly pairs: HeaderValue[] = new Array(2 * USUAL_HEADERS);
  /** The lower-case name of each pair. */
  private readonly keys: string[] = new Array(USUAL_HEADERS);
  private count = 0;

  /**
   * name, value, name, value: what `writeHead` takes (a list value is a header repeated, as `Set-Cookie`).
   * The preallocated list is cut to the pairs set, not copied.
   */
  get list(): HeaderValue[] {
    this.pairs.length = 2 * this.count;
    return this.pairs;
  }

  set(name: string, value: HeaderValue): void {
    const key = lowerCase(name);
    let at = this.indexOf(key);
    if (at === -1) {
      at = this.count++;
      this.keys[at] = key;
    }
    this.pairs[2 * at] = name;
    this.pairs[2 * at + 1] = value;
  }

  /** Sets every header of a flat list (`[name, value, ...]`). */
  setAll(list: readonly HeaderValue[]): void {
    for (let at = 0; at < list.length; at += 2) this.set(list[at] as string, list[at + 1]!);
  }

  get(name: string): HeaderValue | undefined {
    const at = this.indexOf(lowerCase(name));
    return at === -1 ? undefined : this.pairs[2 * at + 1];
  }

  has(name: string): boolean {
    return this.indexOf(lowerCase(name)) !== -1;
  }

  /** By lower-case name, as `res.getHeaders()` gives them. */
  toObject(): Record<string, HeaderValue> {
    const headers: Record<string, HeaderValue> = {};
    for (let at = 0; at < this.count; at++) headers[this.keys[at]!] = this.pairs[2 * at + 1]!;
    return headers;
  }

  private indexOf(key: string): number {
    for (let at = 0; at < this.count; at++) if (this.keys[at] === key) return at;
    return -1;
  }
}

/**
 * Makes `writeHead` of the responses built on `response` (Express's
 * `app.response`) send the headers their request's context recorded with
 * those it is given, which replace recorded ones of the same name: every way
 * a response starts (the engine's writers, Express's `res.send`, a static
 * file) ends in `writeHead`, so no header set by a phase is lost on any of
 * them. A response whose request has no context is Node's own.
 *
 * @example writeRecordedHeaders(app.response);
 */
export function writeRecordedHeaders(response: ServerResponse): void {
  const writeHead = ServerResponse.prototype.writeHead;
  response.writeHead = function writeHeadWithRecorded(this: ServerResponse, status: number, ...rest: unknown[]): ServerResponse {
    const recorded = (this.req as Request).context?.responseHeaders;
    if (recorded === undefined) return Reflect.apply(writeHead, this, [status, ...rest]) as ServerResponse;
    const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
    const given = (reason === undefined ? rest[0] : rest[1]) as HeadersArgument | undefined;
    if (given !== undefined) recordAll(recorded, given);
    return Reflect.apply(writeHead, this, reason === undefined ? [status, recorded.list] : [status, reason, recorded.list]) as ServerResponse;
  } as ServerResponse['writeHead'];
}

function recordAll(recorded: ResponseHeaders, given: HeadersArgument): void {
  if (!Array.isArray(given)) {
    for (const [name, value] of Object.entries(given as Readonly<Record<string, string | number | string[] | undefined>>)) {
      if (value !== undefined) recorded.set(name, typeof value === 'number' ? String(value) : value);
    }
  } else if (given.length > 0 && Array.isArray(given[0])) {
    for (const [name, value] of given as ReadonlyArray<readonly [string, HeaderValue]>) recorded.set(name, value);
  } else {
    recorded.setAll(given as readonly HeaderValue[]);
  }
}
