import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { mediaKind } from '../contract/media-types';
import { integerText } from './integer-text';
import { sendJson } from './send-json';
import { headerList } from './header-list';

/**
 * What a handler may answer with for a media type that is neither JSON nor
 * text: bytes, a Blob, or a stream (Node's or the web's), sent as they come.
 */
export type BinaryBody = Uint8Array | ArrayBuffer | Blob | NodeJS.ReadableStream | WebReadableStream;

/**
 * Writes a body in `mediaType` (a concrete type): JSON serialized, text as
 * UTF-8, a form as `application/x-www-form-urlencoded`, anything else as the
 * bytes or stream given. Resolves when the body is handed to the socket.
 *
 * @example await sendBody(res, 200, 'text/csv', 'id,name\n1,Rex\n', { 'X-Request-Id': id });
 */
export async function sendBody(
  res: ServerResponse,
  status: number,
  mediaType: string,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
): Promise<void> {
  const kind = mediaKind(mediaType);
  if (kind === 'json') return sendJson(res, status, body, headers, jsonContentType(mediaType));
  const head = headerList(headers);
  if (kind === 'text' || (kind === 'form' && typeof body === 'string'))
    return writeAll(res, status, head, `${mediaType}; charset=utf-8`, Buffer.from(String(body), 'utf8'));
  if (kind === 'form') return writeAll(res, status, head, mediaType, Buffer.from(new URLSearchParams(body as Record<string, string>).toString(), 'utf8'));
  if (body instanceof Blob) return writeAll(res, status, head, mediaType, Buffer.from(await body.arrayBuffer()));
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return writeAll(res, status, head, mediaType, Buffer.from(body as Uint8Array));
  if (typeof body === 'string') return writeAll(res, status, head, mediaType, Buffer.from(body, 'utf8'));
  const stream = isWebStream(body) ? Readable.fromWeb(body) : (body as NodeJS.ReadableStream);
  head.push('Content-Type', mediaType);
  res.writeHead(status, head);
  await pipeline(stream, res);
}

function writeAll(res: ServerResponse, status: number, head: string[], contentType: string, bytes: Buffer): void {
  head.push('Content-Type', contentType, 'Content-Length', integerText(bytes.length));
  res.writeHead(status, head).end(bytes);
}

const isWebStream = (body: unknown): body is WebReadableStream => typeof (body as { getReader?: unknown } | null)?.getReader === 'function';

/** `application/json` gets the charset the project has always sent; other JSON types are sent as declared. */
const jsonContentType = (mediaType: string): string => (mediaType === 'application/json' ? 'application/json; charset=utf-8' : `${mediaType}; charset=utf-8`);
