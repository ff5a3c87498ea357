/**
 * Conditional requests, as the fuzzer drives them (RFC 9110 13): for a write
 * that declares `If-Match` on an item whose read declares an `ETag`, the
 * positive cases send the current tag (read just before), and one sequence
 * checks that a write without the header (when 428 is declared) or with a
 * stale tag never succeeds and changes nothing; for a read that declares
 * `If-None-Match` and 304, that the current tag (strong or weak) gets a 304
 * with no body and another tag the resource.
 */
import type { CheckFailure } from './checks';
import type { HttpResponse } from './transport';
import type { Operation } from './spec';

/** What an operation declares about conditional requests. */
export interface ConditionalFacts {
  ifMatch: boolean;
  ifNoneMatch: boolean;
  requiresCondition: boolean;
  notModified: boolean;
}

const hasHeader = (operation: Operation, name: string): boolean =>
  operation.parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === name);

export function conditionalFacts(operation: Operation): ConditionalFacts {
  return {
    ifMatch: hasHeader(operation, 'if-match'),
    ifNoneMatch: hasHeader(operation, 'if-none-match'),
    requiresCondition: '428' in operation.responses,
    notModified: '304' in operation.responses,
  };
}

/** Whether the item read declares an `ETag` on its 200: where the current tag of a write's target is read. */
export const readsTag = (item: Operation): boolean => Object.keys(item.responses['200']?.headers ?? {}).some((name) => name.toLowerCase() === 'etag');

/** A tag no server issued: a stale one. */
export const STALE_TAG = '"contract-fuzzer-stale"';

/** The statuses that may refuse a conditional write before its condition is looked at: who may (401, 403), and whether it exists (404). */
const REFUSED_FIRST = [401, 403, 404];

/** A write sent without `If-Match`, or with a stale tag: never a success, and 428 / 412 unless refused first. */
export function unconditionalWriteRefused(expected: 412 | 428, response: HttpResponse): CheckFailure[] {
  if (response.status === expected || REFUSED_FIRST.includes(response.status)) return [];
  return [
    {
      check: 'conditional_requests',
      expected: `${expected} (or ${REFUSED_FIRST.join(', ')}): ${expected === 428 ? 'a write without If-Match' : 'a write with a stale If-Match'} is refused`,
      got: `${response.status} ${response.text.slice(0, 200)}`,
    },
  ];
}

/** The target's tag after a refused write: unchanged (nothing was written). */
export function unchanged(before: string, response: HttpResponse): CheckFailure[] {
  const after = response.headers['etag'];
  return after === before
    ? []
    : [{ check: 'conditional_requests', expected: `the ETag still ${before}: a refused conditional write changes nothing`, got: `ETag ${after}` }];
}

/** A read with `If-None-Match` naming the current tag: 304, no body, the same tag. */
export function notModified(tag: string, response: HttpResponse): CheckFailure[] {
  if (response.status === 304 && response.text.length === 0 && response.headers['etag'] === tag) return [];
  return [
    {
      check: 'conditional_requests',
      expected: `304 with no body and ETag ${tag} for If-None-Match naming the current tag`,
      got: `${response.status} ETag ${response.headers['etag']} ${response.text.slice(0, 200)}`,
    },
  ];
}
