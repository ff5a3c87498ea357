import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../errors/api-error';
import { PROBLEM_JSON, prefersProblem, problemOf } from '../errors/problem-details';
import { sendJson } from './send-json';

/**
 * Writes an error answer: the Error object, or RFC 9457 problem details when
 * the document declares them (`problems`) and the client's `Accept` prefers
 * them. The one place both shapes are chosen between.
 *
 * @example sendError(res, req.headers.accept, true, 404, errorBody(404, 'not_found', 'no such pet'));
 */
export function sendError(
  res: ServerResponse,
  accept: string | undefined,
  problems: boolean,
  status: number,
  body: ErrorBody,
  headers?: Readonly<Record<string, string>>,
): void {
  if (!problems) sendJson(res, status, body, headers);
  // A cache must not give one client's shape to another.
  else if (prefersProblem(accept)) sendJson(res, status, problemOf(body), { ...headers, Vary: 'Accept' }, `${PROBLEM_JSON}; charset=utf-8`);
  else sendJson(res, status, body, { ...headers, Vary: 'Accept' });
}
