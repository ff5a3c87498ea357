import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type { Stage } from '../engine/stage';
import type { Logger } from 'pino';
import { contextOf } from '../engine/context';

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

/**
 * `req.log`: a child of `logger` that adds `requestId` to every line about
 * the request. Created on first use only, so requests that log nothing (the
 * usual case) pay nothing.
 *
 * @example attachRequestLogger(app, logger); ... req.log.warn({ detail }, 'something odd');
 */
export function attachRequestLogger(app: Express, logger: Logger): void {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: { id?: string }) {
      const child = logger.child({ requestId: this.id });
      Object.defineProperty(this, 'log', { value: child, configurable: true });
      return child;
    },
  });
}

declare module 'express-serve-static-core' {
  interface Request {
    /** This request's id, echoed in `X-Request-Id` (set by `assignRequestId`). */
    id: string;
    /** A logger whose lines carry the request id (see `attachRequestLogger`). */
    log: Logger;
  }
}
