import type { Readable } from 'node:stream';
import { ApiError } from '../errors/api-error';
import { eventData, readEvent, sequentialFormat, type SequentialFormat } from '../response/sequential';

/** The sequential formats a request body may be sent in: all of them (JSON Lines and NDJSON, JSON text sequences, Server-Sent Events). */
export type ItemFormat = SequentialFormat;

/** The format of a request body's media type when the engine reads it item by item; undefined otherwise. */
export function itemFormat(mediaType: string): ItemFormat | undefined {
  return sequentialFormat(mediaType);
}

export interface ItemReading {
  format: ItemFormat;
  /** The largest item (one line, one record), in bytes: a larger one is a 413. */
  maxItemBytes: number;
  /** The largest body in all, in bytes: past it, a 413. */
  maxTotalBytes: number;
  /** Checks one item against its item schema: undefined when valid, else what breaks it (`data/name must be string`). */
  check(item: unknown): string | undefined;
  /** Refuses what JSON can hold but the service cannot store faithfully (NUL, unpaired surrogates). */
  refuseUnsafe(item: unknown, where: string): void;
  /**
   * For Server-Sent Events: whether the item schema describes the event's
   * fields (`data`, `event`, `id`, `retry`), so each item is the event; else
   * each item is the event's data, read as JSON when it is JSON (as the
   * response side writes it: src/engine/response/sequential.ts).
   */
  eventFields?: boolean;
}

/**
 * A request body of items, read as the handler asks for them: each line (or
 * record) parsed and checked against the item schema before it is handed
 * over, so a handler never sees an item the contract refuses, and nothing is
 * held but the item being read. A line that is not JSON, or breaks its
 * schema, is a 400 naming its line (record) number; an item or a body larger
 * than its limit, a 413. These reach the handler as the error of its
 * `for await`: thrown on, they are answered as Error objects while nothing
 * has been sent.
 *
 * @example for await (const pet of readItems(req, reading)) await pets.create(pet);
 */
export async function* readItems(body: Readable, reading: ItemReading): AsyncGenerator<unknown> {
  const unit = UNITS[reading.format];
  let number = 0;
  for await (const record of records(body, reading, unit)) {
    number++;
    const where = `body ${unit} ${number}`;
    let value: unknown;
    if (reading.format === 'sse') {
      const event = readEvent(record);
      if (event === undefined || (!reading.eventFields && event.data === undefined)) continue;
      value = reading.eventFields ? event : eventData(event.data!);
    } else {
      const text = record.endsWith('\r') ? record.slice(0, -1) : record;
      if (text.trim() === '') continue;
      try {
        value = JSON.parse(text);
      } catch {
        throw new ApiError(400, 'invalid_request', `${where} is not valid JSON`);
      }
    }
    reading.refuseUnsafe(value, where);
    const problem = reading.check(value);
    if (problem !== undefined) throw new ApiError(400, 'invalid_request', problem.replace(/^data/, where));
    yield value;
  }
}

const UNITS: Record<ItemFormat, string> = { jsonl: 'line', 'json-seq': 'record', sse: 'event' };

/**
 * The body's records as text, in order (blank ones included, so numbers
 * count them): split at each line feed (JSON Lines), RS (JSON text
 * sequences, where the text before the first RS must be blank) or blank line
 * (Server-Sent Events, line ends made line feeds), decoded as UTF-8, within
 * the item and total limits.
 */
async function* records(body: Readable, reading: ItemReading, unit: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const separator = { jsonl: '\n', 'json-seq': '\u001e', sse: '\n\n' }[reading.format];
  const sse = reading.format === 'sse';
  const decode = (bytes?: Buffer): string => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch {
      throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
    }
  };
  let beforeFirst = reading.format === 'json-seq';
  const opening = (text: string): void => {
    beforeFirst = false;
    if (text.trim() !== '') throw new ApiError(400, 'invalid_request', 'body is not a JSON text sequence: it must start with RS (0x1E)');
  };
  let pending = '';
  let total = 0;
  let count = 0;
  // Checked on every record and on what waits for its separator: a record may end in the chunk that takes it past the limit.
  const withinItemLimit = (text: string): string => {
    if (Buffer.byteLength(text) > reading.maxItemBytes) {
      throw new ApiError(413, 'payload_too_large', `body ${unit} ${count + 1} must not be larger than ${reading.maxItemBytes} bytes`);
    }
    return text;
  };
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    total += bytes.length;
    if (total > reading.maxTotalBytes) throw new ApiError(413, 'payload_too_large', `body must not be larger than ${reading.maxTotalBytes} bytes in all`);
    pending += decode(bytes);
    // SSE lines end in CRLF, LF or CR; a CR last may be the first half of a CRLF, so it waits for the next chunk.
    if (sse) pending = pending.replace(/\r\n|\r(?!$)/g, '\n');
    for (let at = pending.indexOf(separator); at !== -1; at = pending.indexOf(separator)) {
      const text = pending.slice(0, at);
      pending = pending.slice(at + separator.length);
      if (beforeFirst) opening(text);
      else {
        withinItemLimit(text);
        count++;
        yield text;
      }
    }
    withinItemLimit(pending);
  }
  pending += decode();
  if (sse) pending = pending.replace(/\r\n?/g, '\n');
  if (beforeFirst) opening(pending);
  else if (pending.trim() !== '') yield withinItemLimit(pending);
}
