import type { Request } from 'express';
import type { Logger } from 'pino';
import { responseConformance, VIOLATION_KINDS, type SentResponse, type ServedApi } from '../engine/contract';
import type { Metrics } from './metrics';
import { UNMATCHED } from './operation-names';
import { loggedPath } from '../engine/pipeline';
import { contextOf } from '../engine/context';

export interface ContractViolationsOptions {
  apis: readonly ServedApi[];
  /** The service's operation names: it also sets `contextOf(req).apiVersion`, the version whose base path the request is under. */
  operationOf: (req: Request) => string;
  metrics: Metrics;
  logger: Logger;
  /** The clock (ms) of the log's throttle. */
  now: () => number;
}

/** At most one log line per operation and kind in this time; the others are counted only. */
const LOG_INTERVAL_MS = 60_000;

/**
 * Judges a response already sent by the contract's rule
 * (src/engine/contract/response-conformance.ts) and reports what breaks it: every
 * violation counted in `pas_contract_violations_total{operation,kind}`, and
 * logged (warn) at most once a minute per operation and kind, with the
 * request id, the status and the explanation, and how many were counted
 * without a line since the last one (`suppressed`). Never the body.
 *
 * A request under a version's base path that matched no operation is judged
 * as one whose errors must be Error objects (`operation="unmatched"`); one
 * outside every base path (health, readiness, metrics, docs) is not judged:
 * the contract declares nothing there. The counter's series of every
 * operation start at 0.
 *
 * @example const report = contractViolations({ apis, operationOf, metrics, logger, now: Date.now }); report(req, sent);
 */
export function contractViolations({ apis, operationOf, metrics, logger, now }: ContractViolationsOptions): (req: Request, response: SentResponse) => void {
  const served = new Map(apis.map((api) => [api.name, { table: api.table, check: responseConformance(api.contract) }]));
  for (const api of apis) {
    for (const path of api.table.paths) {
      for (const { operationId } of path.operations.values()) {
        for (const kind of VIOLATION_KINDS) metrics.contractViolations.inc({ operation: operationId, kind }, 0);
      }
    }
  }
  const lastLines = new Map<string, { at: number; suppressed: number }>();

  return (req, response) => {
    operationOf(req);
    const { apiVersion } = contextOf(req);
    const api = apiVersion === undefined ? undefined : served.get(apiVersion);
    if (!api) return;
    const url = req.originalUrl;
    const query = url.indexOf('?');
    const match = api.table.match(req.method, query === -1 ? url : url.slice(0, query))?.operation;
    const operation = match?.operationId ?? UNMATCHED;
    for (const { kind, message } of api.check(match, response)) {
      metrics.contractViolations.inc({ operation, kind });
      const key = `${operation} ${kind}`;
      const last = lastLines.get(key);
      const at = now();
      if (last && at - last.at < LOG_INTERVAL_MS) {
        last.suppressed++;
        continue;
      }
      logger.warn(
        {
          requestId: req.id,
          operation,
          version: contextOf(req).apiVersion,
          kind,
          status: response.status,
          method: req.method,
          path: loggedPath(req),
          explanation: message,
          suppressed: last?.suppressed ?? 0,
        },
        'a sampled response breaks the contract',
      );
      lastLines.set(key, { at, suppressed: 0 });
    }
  };
}
