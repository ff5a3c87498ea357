import { isUtf8 } from 'node:buffer';
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
  /** The most items one body may hold (the stream schema's `maxItems`, else the configured default): past it, a 413. */
  maxItems: number;
  /** Checks one item against its item schema: undefined when valid, else what breaks it (`data/name must be string`). */
  check(item: unknown): string | undefined;
  /** Refuses what JSON can hold but the service cannot store faithfully (NUL, unpaired surrogates), or nests too deep. */
  refuseUnsafe(item: unknown, where: string): void;
  /**
   * For Server-Sent Events: whether the item schema describes the event's
   * fields (`data`, `event`, `id`, `retry`), so each item is the event; else
   * each item is the event's data, read as JSON when it is JSON (as the
   * response side writes it: src/response/sequential.ts).
   */
  eventFields?: boolean;
}

/**
 * A request body of items, read as the handler asks for them: each line (or
 * record) parsed and checked against the item schema before it is handed
 * over, so a handler never sees an item the contract refuses, and nothing is
 * held but the chunk being read, its items, and the record that waits for
 * the next chunk. A line that is not
 * JSON, or breaks its schema, is a 400 naming its line (record) number; an
 * item or a body larger than its limit, or more items than `maxItems`, a 413.
 * These reach the handler as the error of its `for await`, after the items
 * before them: thrown on, they are answered as Error objects while nothing
 * has been sent.
 *
 * The work is linear in the bytes received, however the client chunks them:
 * each byte is looked at once when it arrives, a record is decoded once when
 * it ends, and the records a chunk completes are read together. `tally` is
 * told how many items each chunk gave (the rate limits weigh a stream by them).
 *
 * @example for await (const pet of readItems(req, reading)) await pets.create(pet);
 */
export async function* readItems(body: Readable, reading: ItemReading, tally?: (items: number) => void): AsyncGenerator<unknown> {
  const unit = UNITS[reading.format];
  const splitter = new RecordSplitter(reading, unit);
  let items = 0;
  // Every record of a chunk is read before its items are handed over; an error is thrown after the items before it.
  const batch: unknown[] = [];
  let failure: unknown;
  const onRecord = (bytes: Buffer, number: number): void => {
    const value = itemOf(bytes, number);
    if (value === SKIPPED) return;
    if (++items > reading.maxItems) throw new ApiError(413, 'payload_too_large', `body must not hold more than ${reading.maxItems} items`);
    batch.push(value);
  };
  const itemOf = (bytes: Buffer, number: number): unknown => {
    const where = `body ${unit} ${number}`;
    const text = decode(bytes);
    let value: unknown;
    if (reading.format === 'sse') {
      const event = readEvent(text);
      if (event === undefined || (!reading.eventFields && event.data === undefined)) return SKIPPED;
      value = reading.eventFields ? event : eventData(event.data!);
    } else {
      // Blank records of ASCII whitespace never get here; this is the rare blank record of other Unicode spaces.
      if (text.trim() === '') return SKIPPED;
      try {
        value = JSON.parse(text);
      } catch {
        throw new ApiError(400, 'invalid_request', `${where} is not valid JSON`);
      }
    }
    reading.refuseUnsafe(value, where);
    const problem = reading.check(value);
    if (problem !== undefined) throw new ApiError(400, 'invalid_request', problem.replace(/^data/, where));
    return value;
  };
  const drain = function* (): Generator<unknown> {
    if (batch.length > 0) tally?.(batch.length);
    for (let index = 0; index < batch.length; index++) yield batch[index];
    batch.length = 0;
    if (failure !== undefined) throw failure;
  };
  for await (const chunk of body) {
    try {
      splitter.push(chunk as Buffer, onRecord);
    } catch (error) {
      failure = error;
    }
    yield* drain();
  }
  try {
    splitter.end(onRecord);
  } catch (error) {
    failure = error;
  }
  yield* drain();
}

/**
 * Reads a body of items to its end for a caller that has no use for them (a
 * mock): each item is still checked as it is read, and the first refusal
 * (`readItems`' 400 naming the item, or a 413) is thrown.
 *
 * @example await readToEnd(req.body as AsyncIterable<unknown>) // 3
 */
export async function readToEnd(items: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _item of items) count++;
  return count;
}

const UNITS: Record<ItemFormat, string> = { jsonl: 'line', 'json-seq': 'record', sse: 'event' };

/** What a blank record, or an event without data, gives: nothing. */
const SKIPPED = Symbol('skipped');

const LF = 0x0a;
const CR = 0x0d;
const RS = 0x1e;

/** Space, tab, CR and LF: a record of only these is blank, skipped without being decoded. */
const isBlankByte = (byte: number): boolean => byte === 0x20 || byte === 0x09 || byte === CR || byte === LF;

function decode(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
  return bytes.toString('utf8');
}

type OnRecord = (bytes: Buffer, number: number) => void;

/**
 * Splits the body's bytes into records as they arrive: at each line feed
 * (JSON Lines), RS (JSON text sequences, where only blanks may come before
 * the first RS) or empty line (Server-Sent Events, whose lines end in CRLF,
 * LF or CR). The separators are ASCII, so a split never falls inside a UTF-8
 * character. What waits for its separator is kept as the chunks it came in
 * and joined once; the item limit is checked on its running length. Blank
 * lines and records are counted (numbers name them as the client sent them)
 * but never decoded or handed on.
 */
class RecordSplitter {
  private readonly separator: number;
  private readonly sse: boolean;
  /**
   * The bytes of the record still waiting for its separator, copied into one
   * buffer that doubles as it fills (never past the item limit), so a record
   * trickled a byte a chunk costs neither a rescan nor an object per chunk.
   */
  private waiting: Buffer = EMPTY;
  private partBytes = 0;
  /** Whether the waiting record holds a byte other than blank ones. */
  private partFilled = false;
  private total = 0;
  /** Records ended so far (JSON Lines and text sequences: blank ones included; events: those with a field or comment). */
  private number = 0;
  private beforeFirst: boolean;
  /** SSE: the last byte ended a line, and it was a CR (so an LF next belongs to it). */
  private atLineStart = false;
  private afterCr = false;

  constructor(
    private readonly reading: ItemReading,
    private readonly unit: string,
  ) {
    this.separator = reading.format === 'json-seq' ? RS : LF;
    this.sse = reading.format === 'sse';
    this.beforeFirst = reading.format === 'json-seq';
  }

  push(chunk: Buffer, onRecord: OnRecord): void {
    this.total += chunk.length;
    if (this.total > this.reading.maxTotalBytes) {
      throw new ApiError(413, 'payload_too_large', `body must not be larger than ${this.reading.maxTotalBytes} bytes in all`);
    }
    if (this.sse) this.pushEvents(chunk, onRecord);
    else this.pushRecords(chunk, onRecord);
  }

  /** What is left when the body ends: a last record without its separator. */
  end(onRecord: OnRecord): void {
    if (this.beforeFirst || !this.partFilled) return;
    this.number++;
    onRecord(this.joined(EMPTY), this.number);
  }

  /** JSON Lines and JSON text sequences: one native search per record, and a tight loop over runs of separators. */
  private pushRecords(chunk: Buffer, onRecord: OnRecord): void {
    const { separator } = this;
    let start = 0;
    while (start < chunk.length) {
      const at = chunk.indexOf(separator, start);
      const end = at === -1 ? chunk.length : at;
      this.scan(chunk, start, end);
      if (at === -1) {
        this.wait(chunk.subarray(start));
        return;
      }
      this.close(chunk.subarray(start, at), onRecord);
      start = at + 1;
      // A run of separators is a run of empty records: counted, nothing else.
      while (start < chunk.length && chunk[start] === separator) {
        this.number++;
        start++;
      }
    }
  }

  /** Server-Sent Events: a byte at a time, since an event ends at an empty line of any of three line ends. */
  private pushEvents(chunk: Buffer, onRecord: OnRecord): void {
    let start = 0;
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index]!;
      if (this.afterCr && byte === LF) {
        this.afterCr = false;
        // The LF of the CRLF that ended an event belongs to no event.
        if (start === index && this.partBytes === 0) start = index + 1;
        continue;
      }
      this.afterCr = byte === CR;
      if (byte !== LF && byte !== CR) {
        this.atLineStart = false;
        continue;
      }
      if (!this.atLineStart) {
        this.atLineStart = true;
        continue;
      }
      // An empty line: the event is what came before it.
      this.scan(chunk, start, index);
      this.close(chunk.subarray(start, index), onRecord);
      start = index + 1;
    }
    this.scan(chunk, start, chunk.length);
    this.wait(chunk.subarray(start));
  }

  /** Notes whether the bytes `from`..`to` of `chunk` fill the waiting record (hold a byte other than blanks); stops at the first that does. */
  private scan(chunk: Buffer, from: number, to: number): void {
    if (this.partFilled) return;
    for (let index = from; index < to; index++) {
      if (!isBlankByte(chunk[index]!)) {
        if (this.beforeFirst) throw new ApiError(400, 'invalid_request', 'body is not a JSON text sequence: it must start with RS (0x1E)');
        this.partFilled = true;
        return;
      }
    }
  }

  /** Keeps the rest of a chunk for the record that waits for its separator (blanks before a text sequence's first RS are dropped). */
  private wait(rest: Buffer): void {
    if (rest.length === 0 || this.beforeFirst) return;
    if (this.partBytes + rest.length > this.reading.maxItemBytes) this.tooLarge();
    this.append(rest);
  }

  private append(bytes: Buffer): void {
    const needed = this.partBytes + bytes.length;
    if (needed > this.waiting.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, Math.min(2 * this.waiting.length, this.reading.maxItemBytes), WAITING_START));
      this.waiting.copy(grown, 0, 0, this.partBytes);
      this.waiting = grown;
    }
    bytes.copy(this.waiting, this.partBytes);
    this.partBytes = needed;
  }

  /** Ends the waiting record with `last` (its bytes in this chunk) and hands it on unless it is blank. */
  private close(last: Buffer, onRecord: OnRecord): void {
    const filled = this.partFilled;
    const bytes = filled ? this.joined(last) : undefined;
    this.partBytes = 0;
    this.partFilled = false;
    if (this.beforeFirst) {
      this.beforeFirst = false;
      return;
    }
    if (bytes === undefined) {
      // A blank event is no event; a blank line is still a line.
      if (!this.sse) this.number++;
      return;
    }
    this.number++;
    if (bytes.length > this.reading.maxItemBytes) this.tooLarge();
    onRecord(bytes, this.number);
  }

  /**
   * The waiting bytes and `last` as one run (copied only when the record
   * spans chunks). It is read before the next chunk is, so the buffer is
   * reused; a large one is let go, so an idle stream holds little.
   */
  private joined(last: Buffer): Buffer {
    if (this.partBytes === 0) return last;
    if (this.partBytes + last.length > this.reading.maxItemBytes) this.tooLarge();
    this.append(last);
    const whole = this.waiting.subarray(0, this.partBytes);
    if (this.waiting.length > WAITING_START) this.waiting = EMPTY;
    return whole;
  }

  private tooLarge(): never {
    throw new ApiError(413, 'payload_too_large', `body ${this.unit} ${this.number + 1} must not be larger than ${this.reading.maxItemBytes} bytes`);
  }
}

const EMPTY = Buffer.alloc(0);
/** The first size of the buffer of a record that spans chunks. */
const WAITING_START = 16 * 1024;
