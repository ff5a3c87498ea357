import { randomUUID } from 'node:crypto';
import type { Stage } from '../stage/stage';
import { contextOf } from '../context/request-context';

/** 1 to 128 printable ASCII characters (0x21–0x7E): safe in a header, a log line and a terminal. */
const SAFE_REQUEST_ID = /^[\x21-\x7E]{1,128}$/;

/**
 * Gives every request an id, first thing in the pipeline, so every response
 * carries it (errors included): the client's `X-Request-Id` when it is safe,
 * else a new UUID. A client that sends its own can find its request in the
 * server's logs; an unsafe one (too long, spaces, control or non-ASCII
 * characters) is replaced, never echoed.
 *
 * @example stages.push(assignRequestId);
 */
export const assignRequestId: Stage = (req) => {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  req.id = id;
  contextOf(req).responseHeaders.set('X-Request-Id', id);
};
