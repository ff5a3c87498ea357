/**
 * The HTTP server's defences against hostile or broken clients, applied below
 * Express where a request is still bytes on a socket:
 *
 * - slow clients: the headers must arrive within `headersTimeoutMs` and the
 *   whole request within `requestTimeoutMs` (slowloris, trickled bodies, a
 *   Content-Length longer than the body); an idle keep-alive socket is closed
 *   after `keepAliveTimeoutMs`;
 * - many connections: at most `maxConnections` sockets at once, and at most
 *   `maxConnectionsPerClient` from one peer address (an IPv6 peer counted by
 *   its /56, as the rate limits count it); the excess is closed as soon as it
 *   is accepted, before a byte is read. The peer is the socket's, never
 *   X-Forwarded-For: behind a proxy, the proxy holds the slots (deploy/
 *   caps each client there);
 * - the request line and headers together are limited to MAX_HEADER_BYTES;
 * - whatever Node's parser refuses (oversized headers, a timeout, malformed
 *   HTTP such as Transfer-Encoding with Content-Length) is answered with an
 *   Error object and the connection closed, instead of Node's bodiless reply.
 */
import { randomUUID } from 'node:crypto';
import http, { type RequestListener, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ipKeyGenerator } from 'express-rate-limit';
import { errorBody } from '@spec-first/engine';
import type { Config } from '../config';

/** Timeouts and the connection cap, as configured. */
export type HttpLimits = Config['httpLimits'];

/** Request line plus headers (Node's default, stated so it is documented and tested). */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Node enforces the two timeouts by sweeping its connections on this interval
 * (30 s by default, which would let a slow client stay 30 s past its timeout).
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * An http.Server for `app` with the limits applied; `src/server.ts` listens
 * on it (and the tests start that entry point).
 *
 * @example createHttpServer(app, config.httpLimits).listen(3000, '127.0.0.1');
 */
export function createHttpServer(app: RequestListener, limits: HttpLimits): http.Server {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, limits.headersTimeoutMs),
      maxHeaderSize: MAX_HEADER_BYTES,
      // Checked below instead, so the 400 is an Error object like every other.
      requireHostHeader: false,
    },
    (req, res) => {
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400.
      if (req.headers.host === undefined && req.httpVersion === '1.1') {
        const answer = errorBody(400, 'invalid_request', 'the Host header is required');
        const json = JSON.stringify(answer);
        res
          .writeHead(answer.status, {
            'Content-Type': 'application/json; charset=utf-8',
            'Content-Length': Buffer.byteLength(json),
            'X-Request-Id': randomUUID(),
            Connection: 'close',
          })
          .end(json);
        return;
      }
      app(req, res);
    },
  );
  server.maxConnections = limits.maxConnections;
  limitConnectionsPerClient(server, limits.maxConnectionsPerClient);
  server.on('clientError', (error: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) => answerClientError(error, socket, limits));
  return server;
}

/**
 * Closes a new socket at once when its peer already holds `max` of them, so
 * one client that opens sockets and never finishes a request cannot take
 * every slot of `maxConnections` from the others.
 */
function limitConnectionsPerClient(server: http.Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    // A socket that closed before it was handed over has no peer left to count.
    if (address === undefined) return;
    const client = ipKeyGenerator(address);
    const held = open.get(client) ?? 0;
    if (held >= max) {
      socket.destroy();
      return;
    }
    open.set(client, held + 1);
    socket.once('close', () => {
      const left = open.get(client)! - 1;
      if (left === 0) open.delete(client);
      else open.set(client, left);
    });
  });
}

/** What Node's parser (or its timeout sweep) refused, as an Error object. */
function errorFor(error: NodeJS.ErrnoException & { reason?: string }, limits: HttpLimits): ReturnType<typeof errorBody> {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return errorBody(431, 'headers_too_large', `the request line and headers together must not be larger than ${MAX_HEADER_BYTES / 1024} KiB`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errorBody(
        408,
        'request_timeout',
        `the request was not received in time: headers within ${limits.headersTimeoutMs / 1000} s, ` +
          `the whole request within ${limits.requestTimeoutMs / 1000} s`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return errorBody(413, 'payload_too_large', 'chunk extensions are too large');
    default:
      // llhttp's reasons are fixed strings such as "Content-Length can't be present with Transfer-Encoding".
      return errorBody(400, 'invalid_request', `malformed HTTP request${error.reason ? `: ${error.reason}` : ''}`);
  }
}

/**
 * Mirrors Node's own clientError handling (answer only when no response has
 * started on the socket, then close it), with an Error object as the body.
 */
function answerClientError(error: NodeJS.ErrnoException & { reason?: string }, socket: Duplex, limits: HttpLimits): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const answer = errorFor(error, limits);
    const body = JSON.stringify(answer);
    socket.write(
      `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
