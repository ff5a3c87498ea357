import type { Request } from 'express';
import type { Logger } from 'pino';
import { contextOf, type EngineOptions } from '@spec-first/engine';
import type { Caller } from '../service/keys';
import type { Metrics } from './metrics';

type Hooks = NonNullable<EngineOptions['hooks']>;
type Violation = Parameters<NonNullable<Hooks['violation']>>[1];

/** Every kind of violation, so each operation's series start at 0. */
const VIOLATION_KINDS = Object.keys({ status: true, header: true, body: true } satisfies Record<Violation['kind'], true>) as Violation['kind'][];

/** At most one log line per operation and kind of violation in this time; the others are counted only. */
const LOG_INTERVAL_MS = 60_000;

export interface EngineHooksOptions {
  metrics: Metrics;
  logger: Logger;
  /** For the cut streams' log line. */
  streams: { stallMs: number; maxDurationMs: number };
  /** The clock (ms) of the violations' log throttle. */
  now: () => number;
}

/**
 * What the service makes of what the engine reports as requests run: each
 * counted in its metric and, where an operator must look, logged (warn)
 * with the request id:
 *
 * - a deprecated operation's calls, by plan (`pas_deprecated_calls_total`);
 * - streams refused by a cap, items of a streamed answer that break their
 *   schema, streams cut (stalled, or too long);
 * - sampled responses that break the contract
 *   (`pas_contract_violations_total{operation,kind}`), logged at most once a
 *   minute per operation and kind, with how many were counted without a line
 *   since (`suppressed`). Never the body.
 *
 * @example const hooks = engineHooks({ metrics, logger, streams: config.streams, now: Date.now });
 */
export function engineHooks({ metrics, logger, streams, now }: EngineHooksOptions): Hooks {
  const lastLines = new Map<string, { at: number; suppressed: number }>();
  const operationOf = (req: Request): string => contextOf(req).operationName ?? 'unmatched';
  const deprecatedCalls = new Map<string, { inc(): void }>();

  return {
    deprecatedCall: (req, operation, version) => {
      const plan = contextOf<Caller>(req).caller?.plan ?? 'none';
      const key = `${version} ${operation} ${plan}`;
      let series = deprecatedCalls.get(key);
      if (!series) {
        series = metrics.batched.counterSeries(metrics.deprecatedCalls, { operation, plan, version });
        deprecatedCalls.set(key, series);
      }
      series.inc();
    },
    streamRefused: (_req, scope) => metrics.streamRefusals.inc({ scope }),
    invalidItem: (req, index, problem) => {
      const operation = operationOf(req);
      metrics.streamItemViolations.inc({ operation });
      logger.warn({ requestId: req.id, operation, item: index, problem }, `item ${index} of the stream breaks the contract: ${problem}`);
    },
    streamCut: (req, reason) => {
      const why = reason === 'stalled' ? `its reader left the socket full for ${streams.stallMs / 1000} s` : `it lasted ${streams.maxDurationMs / 1000} s`;
      logger.warn({ requestId: req.id, operation: operationOf(req), reason }, `stream cut: ${why}`);
    },
    violation: (req, { operation, version, kind, message, status, path }) => {
      metrics.contractViolations.inc({ operation, kind });
      const key = `${operation} ${kind}`;
      const last = lastLines.get(key);
      const at = now();
      if (last && at - last.at < LOG_INTERVAL_MS) {
        last.suppressed++;
        return;
      }
      logger.warn(
        { requestId: req.id, operation, version, kind, status, method: req.method, path, explanation: message, suppressed: last?.suppressed ?? 0 },
        'a sampled response breaks the contract',
      );
      lastLines.set(key, { at, suppressed: 0 });
    },
  };
}

/**
 * Starts every operation's violation series at 0, so a dashboard tells "no
 * violation" from "never measured".
 *
 * @example startViolationSeries(metrics, engine.operations);
 */
export function startViolationSeries(metrics: Metrics, operations: ReadonlyArray<{ operationId: string }>): void {
  for (const { operationId } of operations) for (const kind of VIOLATION_KINDS) metrics.contractViolations.inc({ operation: operationId, kind }, 0);
}
