/**
 * Per-request CPU cost of the observability middleware (request id, duration
 * histogram, access-log line), in process with fake requests: no sockets, so
 * the figure is not drowned by the machine's noise as a 2 s autocannon run is.
 *
 *   node --import tsx bench/observability-cost.ts
 *
 * Compare with a request's whole CPU cost (1 / req/s of one core in bench/results).
 */
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { createMetrics } from '../src/observability';
import { requestObserver } from '../src/observability';
import type { Stage } from '@spec-first/engine';
import { asMiddleware, assignRequestId, operationResolver, routeTable } from '@spec-first/engine/testing';
import { loadSpec } from '../test/support/contracts';

const REQUESTS = 100_000;
const operationOf = operationResolver([{ name: 'v1', table: routeTable(loadSpec(), '/v1') }]);
const metrics = createMetrics();
const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
const ids = asMiddleware(assignRequestId);
/** The observer after the engine has named the request's operation, as in the pipeline. */
const named =
  (observe: Stage): Stage =>
  (req, res) => {
    operationOf(req);
    return observe(req, res);
  };
const variants = {
  'nothing (fake request and response only)': undefined,
  'request id + metrics (LOG_LEVEL=warn)': asMiddleware(named(requestObserver({ metrics }))),
  'request id + metrics + access log': asMiddleware(named(requestObserver({ metrics, accessLog: logger }))),
};

function fakeRequest(i: number) {
  const headers: Record<string, unknown> = { 'content-length': '812' };
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    headersSent: true,
    writableFinished: true,
    setHeader: (name: string, value: unknown) => (headers[name.toLowerCase()] = value),
    getHeader: (name: string) => headers[name],
  });
  const req = {
    headers: i % 2 ? { 'x-request-id': 'abc-123' } : {},
    method: 'GET',
    originalUrl: `/v1/pets/${i % 100}?x=1`,
    ip: '127.0.0.1',
    caller: { id: 4, plan: 'free' },
  };
  return { req, res } as never as { req: Parameters<typeof ids>[0]; res: Parameters<typeof ids>[1] & EventEmitter };
}

for (let round = 1; round <= 3; round++) {
  for (const [label, middleware] of Object.entries(variants)) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < REQUESTS; i++) {
      const { req, res } = fakeRequest(i);
      if (middleware) {
        ids(req, res, () => undefined);
        void middleware(req, res, () => undefined);
      }
      res.emit('close');
    }
    const micros = Number(process.hrtime.bigint() - start) / REQUESTS / 1000;
    console.log(`round ${round}: ${label}: ${micros.toFixed(2)} µs per request`);
  }
}
