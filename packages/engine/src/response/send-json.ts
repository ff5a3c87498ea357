import type { ServerResponse } from 'node:http';
import { integerText } from './integer-text';
import { headerList } from './header-list';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Writes a JSON response with one `writeHead` (its headers, `headers` and
 * those the request's phases recorded, see response-headers.ts): the one way the engine writes
 * JSON (handlers' responses, Error objects, the HTTP server's own refusals).
 * Express's `res.send` machinery (charset and freshness checks, ETag logic)
 * costs more than the rest of a small response. `contentType` names a JSON
 * media type other than application/json (`+json`), when one is declared.
 *
 * @example sendJson(res, 404, { code: 'not_found', message: 'no such pet', status: 404 });
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
  contentType: string = JSON_CONTENT_TYPE,
): void {
  const head = headerList(headers);
  if (body === undefined) {
    res.writeHead(status, head).end();
    return;
  }
  const json = JSON.stringify(body);
  head.push('Content-Type', contentType, 'Content-Length', integerText(Buffer.byteLength(json)));
  res.writeHead(status, head).end(json);
}
