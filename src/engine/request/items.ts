import type { Readable } from 'node:stream';
import { ApiError } from '../errors/api-error';

/** The sequential formats a request body may be sent in: JSON Lines (and NDJSON), and JSON text sequences. */
export type ItemFormat = 'jsonl' | 'json-seq';

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
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const separator = reading.format === 'jsonl' ? '\n' : '\u001e';
  const unit = reading.format === 'jsonl' ? 'line' : 'record';
  let pending = '';
  let number = 0;
  let total = 0;
  // A JSON text sequence's first record starts after the first RS: whatever comes before it must be blank.
  let beforeFirst = reading.format === 'json-seq';
  const item = (text: string): { found: boolean; value?: unknown } => {
    number++;
    if (beforeFirst) {
      beforeFirst = false;
      number--;
      if (text.trim() !== '') throw new ApiError(400, 'invalid_request', 'body is not a JSON text sequence: it must start with RS (0x1E)');
      return { found: false };
    }
    const trimmed = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (trimmed.trim() === '') return { found: false };
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      throw new ApiError(400, 'invalid_request', `body ${unit} ${number} is not valid JSON`);
    }
    const where = `body ${unit} ${number}`;
    reading.refuseUnsafe(value, where);
    const problem = reading.check(value);
    if (problem !== undefined) throw new ApiError(400, 'invalid_request', problem.replace(/^data/, where));
    return { found: true, value };
  };
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    total += bytes.length;
    if (total > reading.maxTotalBytes) throw new ApiError(413, 'payload_too_large', `body must not be larger than ${reading.maxTotalBytes} bytes in all`);
    try {
      pending += decoder.decode(bytes, { stream: true });
    } catch {
      throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
    }
    let at = pending.indexOf(separator);
    while (at !== -1) {
      const read = item(pending.slice(0, at));
      pending = pending.slice(at + 1);
      if (read.found) yield read.value;
      at = pending.indexOf(separator);
    }
    if (Buffer.byteLength(pending) > reading.maxItemBytes) {
      throw new ApiError(413, 'payload_too_large', `body ${unit} ${number + 1} must not be larger than ${reading.maxItemBytes} bytes`);
    }
  }
  try {
    pending += decoder.decode();
  } catch {
    throw new ApiError(400, 'invalid_request', 'body is not valid UTF-8');
  }
  if (pending.trim() !== '' || beforeFirst) {
    const read = item(pending);
    if (read.found) yield read.value;
  }
}
