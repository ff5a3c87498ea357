import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from '@spec-first/engine';
import type { Metrics } from '../observability';
import type { Config } from '../config';

/** Who may read GET /metrics: clients on this machine, holders of a token, or nobody (absent). */
export type MetricsAccess = Config['metricsAccess'];

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

const unauthorized = (message: string): ApiError => new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="metrics"' });

/** A peer on this machine: the socket's own address (never X-Forwarded-For), IPv4 loopback mapped into IPv6 included. */
const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));

/**
 * `GET /metrics`: the Prometheus text exposition. With a token, requires
 * `Authorization: Bearer <token>`; the comparison is of SHA-256 digests with
 * `timingSafeEqual`, so neither the token's content nor its length leaks
 * through timing. Without one (development and test), only a client on
 * this machine may read it, whatever address the server listens on. Not
 * rate limited: it lives outside the API's base path. Disabled, it is any
 * unknown route's 404 (named `metrics` all the same).
 *
 * @example app.get('/metrics', metricsRoute(metrics, { token: config.metricsToken }));
 */
export function metricsRoute(metrics: Metrics, access: MetricsAccess): RequestHandler {
  if (access === 'disabled') return (_req, _res, next) => next();
  const expected = access === 'loopback' ? undefined : digest(access.token);
  return async (req, res) => {
    if (!expected && !isLoopback(req.socket.remoteAddress)) {
      throw unauthorized(
        'without METRICS_TOKEN, GET /metrics answers clients on this machine only: set METRICS_TOKEN and send Authorization: Bearer <METRICS_TOKEN>',
      );
    }
    if (expected) {
      const header = req.headers.authorization;
      if (header === undefined) throw unauthorized('missing metrics token: send Authorization: Bearer <METRICS_TOKEN>');
      const token = /^bearer +(\S+) *$/i.exec(header)?.[1];
      if (token === undefined || !timingSafeEqual(digest(token), expected)) throw unauthorized('invalid metrics token');
    }
    const body = await metrics.render();
    res.setHeader('Cache-Control', 'no-store');
    res.type(metrics.contentType).send(body);
  };
}
