import { readEvent } from '@spec-first/engine';

/**
 * The items of a streamed answer (a sequential media type), read as they
 * arrive: JSON Lines / NDJSON one JSON text per line, JSON text sequences
 * one per RS-prefixed record, Server-Sent Events one event each (`{ data,
 * event?, id?, retry? }`, `data` as text). A body that ends part-way (the
 * server's way of saying a JSON stream failed) rejects the iteration, as the
 * underlying read does.
 *
 * @example
 * const { response } = await client.GET('/pets/export', { parseAs: 'stream' });
 * for await (const pet of readItems<Pet>(response)) console.log(pet.name);
 */
export async function* readItems<Item>(response: Response): AsyncGenerator<Item> {
  if (!response.body) return;
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const sse = type === 'text/event-stream';
  const separator: string | RegExp = sse ? /\r\n\r\n|\n\n|\r\r/ : type === 'application/json-seq' ? RS : '\n';
  const decoder = new TextDecoder();
  let pending = '';
  const parse = (text: string): { item?: Item } => {
    if (sse) {
      const event = readEvent(text);
      return event === undefined ? {} : { item: event as Item };
    }
    const trimmed = text.trim();
    return trimmed === '' ? {} : { item: JSON.parse(trimmed) as Item };
  };
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    const parts = pending.split(separator);
    pending = parts.pop()!;
    for (const part of parts) {
      const parsed = parse(part);
      if ('item' in parsed) yield parsed.item!;
    }
  }
  pending += decoder.decode();
  const last = parse(pending);
  if ('item' in last) yield last.item!;
}

/** The record separator of a JSON text sequence (RFC 7464). */
const RS = String.fromCharCode(0x1e);
