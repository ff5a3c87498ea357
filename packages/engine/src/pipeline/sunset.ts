import type { Request } from 'express';
import { ApiError } from '../errors/api-error';
import type { Stage } from '../stage/stage';
import type { SpecOperation } from '../contract/document';
import { dateOf } from '../contract/deprecation';

export interface SunsetOptions {
  /** The clock (ms since epoch); tests move it past a sunset. */
  now: () => number;
  /** Told about each call of a deprecated operation that is still served (metrics: who still calls it). */
  deprecatedCall: (operationId: string, req: Request) => void;
}

/**
 * The sunset phase of one operation. An operation marked `deprecated: true`
 * with an `x-sunset` date is counted on every call until that instant (UTC
 * midnight of the date), and from then on answers 410 `gone`, with the
 * `Deprecation`, `Sunset` and successor `Link` headers already set, instead
 * of running its handler. It runs after authentication and the rate limits,
 * so the 410 carries the rate-limit headers and counts. Other operations:
 * nothing to do.
 *
 * @example const stage = sunsetStage(op, { now: Date.now, deprecatedCall: (operation, req) => counter.inc({ operation }) });
 */
export function sunsetStage(op: SpecOperation, { now, deprecatedCall }: SunsetOptions): Stage | undefined {
  if (op.operation.deprecated !== true) return undefined;
  const sunset = op.operation['x-sunset'] === undefined ? undefined : dateOf(op, 'x-sunset');
  const successor = op.operation['x-successor']?.operationId;
  const { operationId } = op;
  return (req) => {
    if (sunset === undefined || now() < sunset.getTime()) {
      deprecatedCall(operationId, req);
      return;
    }
    const instead = successor ? `: use ${successor} instead (see the Link header)` : '';
    throw new ApiError(410, 'gone', `${operationId} was retired on ${sunset.toISOString().slice(0, 10)}${instead}`);
  };
}
