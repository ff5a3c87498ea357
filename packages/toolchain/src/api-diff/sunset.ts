/**
 * The sunset rule. An operation marked `deprecated: true` with `x-sunset`
 * answers every call with a `Sunset` header (packages/engine/src/contract/deprecation.ts): a
 * promise to clients that it keeps working until that date. Removing it on or
 * after the date is the break that header announced, so the version gate lets
 * it through without a major bump; removing it earlier breaks the promise, and
 * within a major version the gate refuses it, naming the date.
 */
import type { OperationObject, OpenApiDocument } from '@spec-first/engine/testing';
import type { ContractChange } from './change';
import { isIsoDate } from './today';

/** A removed operation that the base had deprecated with a sunset date. */
export interface SunsetRemoval {
  /** Absent only when the base lacks one (the server refuses such a contract). */
  operationId?: string;
  method: string;
  path: string;
  /** The base's `x-sunset`, YYYY-MM-DD. */
  sunset: string;
  /** Today is on or after the sunset: the removal is the one the `Sunset` header announced. */
  due: boolean;
}

/**
 * Every breaking removal of a whole operation that the base deprecated with
 * a valid `x-sunset` (an invalid one announces nothing: the server refuses to
 * start with it), judged against `today` (YYYY-MM-DD, UTC).
 *
 * @example
 * sunsetRemovals(release100, changes, '2030-12-05');
 * // [{ operationId: 'getPet', method: 'get', path: '/pets/{petId}', sunset: '2030-12-05', due: true }]
 */
export function sunsetRemovals(base: OpenApiDocument, changes: readonly ContractChange[], today: string): SunsetRemoval[] {
  return changes.flatMap((change) => {
    const where = change.operation;
    if (change.class !== 'breaking' || change.action !== 'remove' || where === undefined || where.at !== '') return [];
    const operation = base.paths[where.path]?.[where.method] as OperationObject | undefined;
    const sunset = operation?.['x-sunset'];
    if (operation?.deprecated !== true || !isIsoDate(sunset)) return [];
    // YYYY-MM-DD strings compare as the days they name.
    return [
      { ...(where.operationId === undefined ? {} : { operationId: where.operationId }), method: where.method, path: where.path, sunset, due: today >= sunset },
    ];
  });
}

/**
 * The changes with the reason of each sunset removal saying what its date
 * makes of it (the class stays breaking: clients calling it do fail).
 *
 * @example
 * withSunsetReasons(changes, removals)[0].reason;
 * // 'clients calling it now fail, as its Sunset header announced for 2030-12-05'
 */
export function withSunsetReasons(changes: readonly ContractChange[], removals: readonly SunsetRemoval[]): ContractChange[] {
  return changes.map((change) => {
    const removal = removals.find(
      (candidate) => change.operation?.at === '' && change.operation.path === candidate.path && change.operation.method === candidate.method,
    );
    if (!removal || change.action !== 'remove') return change;
    const reason = removal.due
      ? `clients calling it now fail, as its Sunset header announced for ${removal.sunset}`
      : `clients calling it now fail, though its Sunset header promised it until ${removal.sunset}`;
    return { ...change, reason };
  });
}
