import type { ServerResponse } from 'node:http';
import { essence } from '../contract/media-types';
import type { StreamRecord } from '../context/request-context';
import { headerList } from './header-list';

/**
 * The sequential media types: a body that is a sequence of items, each
 * written (and read) on its own, so a stream is never held whole.
 *
 * - `sse`: `text/event-stream` (Server-Sent Events: `event:`, `id:`,
 *   `retry:` and `data:` fields, an empty line after each event);
 * - `jsonl`: `application/jsonl`, `application/x-ndjson`,
 *   `application/x-jsonlines` (one JSON text per line);
 * - `json-seq`: `application/json-seq` (RFC 7464: each JSON text after an
 *   RS byte, 0x1E, and ended by a line feed).
 */
export type SequentialFormat = 'sse' | 'jsonl' | 'json-seq';

const FORMATS: Readonly<Record<string, SequentialFormat>> = {
  'text/event-stream': 'sse',
  'application/jsonl': 'jsonl',
  'application/x-ndjson': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'application/jsonlines': 'jsonl',
  'application/json-seq': 'json-seq',
};

/** The sequential format of a media type, or undefined. @example sequentialFormat('application/x-ndjson') // 'jsonl' */
export function sequentialFormat(mediaType: string): SequentialFormat | undefined {
  return FORMATS[essence(mediaType)];
}

/** The Content-Type a stream of `format` is sent with. */
export function streamContentType(format: SequentialFormat, mediaType: string): string {
  return format === 'sse' ? 'text/event-stream; charset=utf-8' : essence(mediaType);
}

/** What a handler answers for a sequential media type: its items, one at a time. */
export type ItemSource<Item = unknown> = AsyncIterable<Item> | Iterable<Item>;

/** Whether a body is a source of items (an async iterable or an iterable other than a string or bytes). */
export function isItemSource(body: unknown): body is ItemSource {
  if (body === null || typeof body !== 'object') return false;
  if (Symbol.asyncIterator in body) return true;
  return Symbol.iterator in body && !(body instanceof Uint8Array);
}

/**
 * A Server-Sent Event as a handler gives it (3.2's SSE item schema): `data`
 * is sent as is when text, as JSON otherwise. An item with none of these
 * fields is the data of an event, sent as JSON (some documents describe the
 * data as the item).
 */
export interface ServerSentEvent {
  data?: unknown;
  event?: string;
  id?: string;
  retry?: number;
  /** A comment line (`: ...`), which clients ignore. */
  comment?: string;
}

/**
 * One item as its format frames it; throws when it cannot be framed
 * faithfully (an SSE `event` or `id` with a line break or NUL would end the
 * field early and corrupt the stream, and JSON cannot hold `undefined`).
 *
 * @example frameItem('jsonl', { id: 1 }) // '{"id":1}\n'
 * @example frameItem('sse', { id: 1, title: 'Dune' }, false) // 'data: {"id":1,"title":"Dune"}\n\n' (the schema describes the data)
 */
export function frameItem(format: SequentialFormat, item: unknown, itemsAreEvents?: boolean): string {
  if (format === 'sse') return itemsAreEvents === false ? frameData(item) : frameEvent(item);
  const json = JSON.stringify(item);
  if (json === undefined) throw new Error(`an item of a ${format} stream is not JSON (${typeof item})`);
  return format === 'jsonl' ? `${json}\n` : `\u001e${json}\n`;
}

/** An item that is an event's data: text as it is, anything else as JSON. */
const frameData = (item: unknown): string => `${dataLines(typeof item === 'string' ? item : (JSON.stringify(item) ?? ''))}\n`;

function frameEvent(item: unknown): string {
  // An object without any SSE field is the event's data (documents describe either the event's fields or its data as the item).
  if (item === null || typeof item !== 'object' || !SSE_FIELDS.some((field) => Object.hasOwn(item, field))) return frameData(item);
  const event = item as ServerSentEvent;
  let text = '';
  if (event.comment !== undefined) text += `: ${singleLine('comment', String(event.comment))}\n`;
  if (event.event !== undefined) text += `event: ${singleLine('event', String(event.event))}\n`;
  if (event.id !== undefined) {
    const id = singleLine('id', String(event.id));
    if (id.includes('\0')) throw new Error('an SSE id cannot hold NUL');
    text += `id: ${id}\n`;
  }
  if (event.retry !== undefined) {
    if (!Number.isInteger(event.retry) || event.retry < 0) throw new Error(`an SSE retry must be a non-negative integer, not ${event.retry}`);
    text += `retry: ${event.retry}\n`;
  }
  if (event.data !== undefined) text += dataLines(typeof event.data === 'string' ? event.data : (JSON.stringify(event.data) ?? ''));
  if (text === '') throw new Error('an SSE event needs data, event, id, retry or a comment');
  return `${text}\n`;
}

const SSE_FIELDS = ['data', 'event', 'id', 'retry', 'comment'] as const;

/** A Server-Sent Event as received: its fields, `data` as text (several `data:` lines joined by line feeds). */
export interface ReceivedEvent {
  data?: string;
  event?: string;
  id?: string;
  retry?: number;
}

/**
 * One event's block of lines, read as the HTML standard parses it: lines
 * ended by CRLF, LF or CR, comments skipped, one space after the colon
 * dropped, a `retry` that is not digits and an `id` holding NUL ignored.
 * Undefined when the block holds no field but comments (a heartbeat). The
 * engine's request reader, the typed client and the contract fuzzer read
 * events through here.
 *
 * @example readEvent('event: added\nid: 7\ndata: {"id":7}') // { event: 'added', id: '7', data: '{"id":7}' }
 */
export function readEvent(block: string): ReceivedEvent | undefined {
  const event: ReceivedEvent = {};
  let fields = 0;
  for (const line of block.split(/\r\n|\n|\r/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
    else if (field === 'event') event.event = value;
    else if (field === 'id' && !value.includes('\0')) event.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) event.retry = Number(value);
    else continue;
    fields++;
  }
  return fields === 0 ? undefined : event;
}

/** The item an event's data carries when the item schema describes the data: JSON when it is a JSON text, else the text (as `frameItem` writes it). */
export function eventData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

const singleLine = (field: string, value: string): string => {
  if (/[\r\n]/.test(value)) throw new Error(`an SSE ${field} cannot hold a line break`);
  return value;
};

/** Text as `data:` lines: each line of it on its own field, so a line break in the data never ends the event. */
const dataLines = (text: string): string =>
  text
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');

/** The comment an idle SSE stream sends, so proxies and clients keep it open. */
export const HEARTBEAT = ': heartbeat\n\n';

export interface StreamOptions {
  /** Checks one item against its schema: undefined when valid, else what breaks it. Undefined: items are not checked. */
  checkItem?: ((item: unknown) => string | undefined) | undefined;
  /**
   * SSE only: whether the item schema describes each event's fields (an item
   * is an event) or its data (an item is the data, whatever its properties);
   * undefined without a schema: an object with an event field is an event.
   */
  itemsAreEvents?: boolean | undefined;
  /** An invalid item ends the stream (strict mode); otherwise it is sent all the same, and reported. */
  strict: boolean;
  /** Called for each invalid item (counted and logged by the caller), with its index from 0. */
  onInvalidItem(index: number, problem: string): void;
  /** SSE only: the idle time after which a heartbeat comment is sent. */
  heartbeatMs: number;
  /** The longest the client may leave a full socket unread before the stream is cut (a reader that stopped reading). */
  stallMs: number;
  /** The longest the stream may last: then it is cut (a reader slow enough to hold it open for ever). */
  maxDurationMs: number;
  /** Told how many items were sent, as they are (the rate limits weigh a stream by them). */
  tally?: ((items: number) => void) | undefined;
  /** Aborted when the server shuts down: an SSE stream ends at once (its client reconnects with Last-Event-ID). */
  shutdown: AbortSignal;
  /** Filled in as the stream goes. */
  record: StreamRecord;
}

/**
 * Sends `items` as a stream of `format`: headers with the first item (or, for
 * SSE, the first heartbeat), then each item framed and written as it comes.
 * It waits while the socket is full (backpressure), sends a heartbeat on an
 * idle SSE stream, and stops the iterator when the client goes away. Nothing
 * is buffered beyond the items of one write. The items that come at once are
 * written together, up to YIELD_BYTES, and the event loop turns after each
 * such write, so one fast reader of a long stream cannot keep other clients
 * waiting; a stream that lasts `maxDurationMs` is cut, however fast its reader.
 *
 * A failure before anything is sent rejects, so the caller answers an Error
 * object. After that, the stream ends so the client can tell it from a
 * complete one: SSE with an `error` event carrying the Error object, JSON
 * Lines and JSON text sequences by closing the connection without the last
 * chunk (an incomplete chunked body, which every HTTP client reports).
 *
 * @example await sendItems(res, 200, 'application/jsonl', pets(), { 'X-Request-Id': id }, options);
 */
export async function sendItems(
  res: ServerResponse,
  status: number,
  mediaType: string,
  items: ItemSource,
  headers: Readonly<Record<string, string>> | undefined,
  options: StreamOptions,
): Promise<void> {
  const format = sequentialFormat(mediaType)!;
  const { record } = options;
  const iterator: AsyncIterator<unknown> | Iterator<unknown> =
    Symbol.asyncIterator in items ? (items as AsyncIterable<unknown>)[Symbol.asyncIterator]() : (items as Iterable<unknown>)[Symbol.iterator]();
  let closed = false;
  let wake: (() => void) | undefined;
  const onClose = (): void => {
    closed = true;
    wake?.();
  };
  res.once('close', onClose);
  const onShutdown = (): void => wake?.();
  // What ends the wait for the next item early: the client leaving, or (SSE only) the server shutting down.
  const stop = (): boolean => closed || (format === 'sse' && options.shutdown.aborted);
  options.shutdown.addEventListener('abort', onShutdown);

  const start = (): void => {
    if (res.headersSent) return;
    const head = headerList(headers);
    // nginx buffers a proxied response unless told not to (deploy/ runs it in front).
    head.push('Content-Type', streamContentType(format, mediaType), 'Cache-Control', 'no-cache', 'X-Accel-Buffering', 'no');
    res.writeHead(status, head);
    res.flushHeaders();
  };
  // Items are framed into one text and written together: when it reaches YIELD_BYTES, or once the items that
  // come at once have come (a tick runs when the handler's next item is not ready yet), so one slow item is
  // still sent as soon as it is framed.
  let pending = '';
  let flushQueued = false;
  /** Writes what is pending; false when the socket is full (the caller waits for it to drain). */
  const flush = (): boolean => {
    flushQueued = false;
    if (pending === '' || closed) return true;
    const text = pending;
    pending = '';
    record.bytes += Buffer.byteLength(text);
    return res.write(text);
  };
  const flushSoon = (): void => void flush();
  const write = async (text: string): Promise<void> => {
    pending += text;
    if (pending.length < YIELD_BYTES) {
      if (!flushQueued) {
        flushQueued = true;
        process.nextTick(flushSoon);
      }
      return;
    }
    if (flush() || closed) {
      // The reader keeps up: the event loop turns before the next batch, so other clients are not kept waiting.
      if (!closed) await new Promise<void>((resolve) => setImmediate(resolve));
      return;
    }
    await until(res, 'drain', options.stallMs, (resolve) => (wake = resolve));
    wake = undefined;
    if (!closed && res.writableNeedDrain) {
      // A reader that stopped reading: the connection is let go, not held for it.
      record.end = 'stalled';
      closed = true;
      res.destroy();
    }
  };

  // However the reader reads, the stream ends by then; what its socket still holds is dropped with it.
  const deadline = setTimeout(() => {
    if (closed) return;
    record.end = 'max_duration';
    closed = true;
    res.destroy();
    wake?.();
  }, options.maxDurationMs);

  let heartbeat: NodeJS.Timeout | undefined;
  const beat = (): void => {
    if (closed) return;
    start();
    flush();
    record.bytes += HEARTBEAT.length;
    res.write(HEARTBEAT);
    heartbeat = setTimeout(beat, options.heartbeatMs);
  };
  const rearm = (): void => {
    if (format !== 'sse') return;
    clearTimeout(heartbeat);
    heartbeat = setTimeout(beat, options.heartbeatMs);
  };

  // A failure once the stream has begun ends it in its format's way; before that, it is thrown for the error mapper to answer.
  const failed = (error: unknown): void => {
    if (!res.headersSent) throw error;
    record.end = 'failed';
    record.error = error;
    flush();
    fail(res, format);
  };

  try {
    rearm();
    for (let index = 0; ; index++) {
      let step: IteratorResult<unknown> | typeof CLOSED;
      try {
        step = await raceClose(iterator.next(), stop, (resolve) => (wake = resolve));
      } catch (error) {
        if (closed) record.end ??= 'client_closed';
        else failed(error);
        return;
      }
      if (closed || step === CLOSED) {
        if (closed) record.end ??= 'client_closed';
        else {
          // Shut down: an SSE client reconnects (with Last-Event-ID) to another instance.
          record.end = 'shutdown';
          start();
          // The connection closes with the stream: the server is stopping, and its client reconnects elsewhere.
          const { socket } = res;
          flush();
          res.end(() => socket?.end());
        }
        return;
      }
      if (step.done) {
        start();
        record.end = 'complete';
        flush();
        res.end();
        return;
      }
      const problem = options.checkItem?.(step.value);
      if (problem !== undefined) {
        options.onInvalidItem(index, problem);
        if (options.strict) {
          // Nothing sent yet: answered as any response that breaks the contract in strict mode, a 500 Error object.
          if (!res.headersSent) throw new Error(`item ${index} of the stream breaks its item schema: ${problem}`);
          record.end = 'invalid_item';
          flush();
          fail(res, format);
          return;
        }
      }
      let framed: string;
      try {
        framed = frameItem(format, step.value, options.itemsAreEvents);
      } catch (error) {
        failed(error);
        return;
      }
      start();
      rearm();
      await write(framed);
      record.items++;
      options.tally?.(1);
      if (closed) {
        record.end ??= 'client_closed';
        return;
      }
    }
  } finally {
    clearTimeout(heartbeat);
    clearTimeout(deadline);
    res.off('close', onClose);
    options.shutdown.removeEventListener('abort', onShutdown);
    // Stops the handler's generator (its `finally` runs): the client left, the stream failed, or it ended early.
    if (record.end !== 'complete') void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

const CLOSED = Symbol('closed');

/** How much a stream writes between two turns of the event loop, when its reader keeps up. */
const YIELD_BYTES = 8 * 1024;

/** The Error object of an SSE stream's `error` event: what failed is logged, not told to the client. */
const STREAM_FAILED = { code: 'internal_error', message: 'the stream failed before its end', status: 500 } as const;

/** The next item, or CLOSED as soon as `stop()` holds (the client left, or shutdown) while it is awaited. */
async function raceClose<T>(next: T | Promise<T>, stop: () => boolean, setWake: (wake: () => void) => void): Promise<T | typeof CLOSED> {
  if (stop()) return CLOSED;
  if (!(next instanceof Promise)) return next;
  return new Promise<T | typeof CLOSED>((resolve, reject) => {
    setWake(() => {
      if (stop()) resolve(CLOSED);
    });
    next.then(resolve, reject);
  });
}

/** Resolves on `event`, or after `ms`, or when woken (the client left). */
function until(res: ServerResponse, event: string, ms: number, setWake: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once(event, done);
    setWake(done);
  });
}

/** Ends a stream that failed after it began, in the way its format lets the client tell it from a complete one. */
function fail(res: ServerResponse, format: SequentialFormat): void {
  if (format === 'sse') {
    res.end(`event: error\ndata: ${JSON.stringify(STREAM_FAILED)}\n\n`);
    return;
  }
  // No last chunk: the connection closes (after what was written is flushed) before the body's terminating chunk,
  // which the client reports as an incomplete body.
  if (res.socket) res.socket.end();
  else res.destroy();
}
