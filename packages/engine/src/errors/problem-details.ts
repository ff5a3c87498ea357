import { STATUS_CODES } from 'node:http';
import type { OpenApiDocument } from '../contract/document';
import { negotiate } from '../contract/media-types';
import type { ErrorBody } from './api-error';

/** RFC 9457's media type. */
export const PROBLEM_JSON = 'application/problem+json';

/**
 * An Error object as RFC 9457 problem details: `type` is `about:blank` (the
 * status says what happened, RFC 9457 4.2.1), so `title` is the status's
 * phrase; the message is the `detail`, and the Error object's `code` stays,
 * as an extension member, for clients that branch on it.
 */
export interface ProblemDetails {
  type: 'about:blank';
  title: string;
  status: number;
  detail: string;
  code: string;
}

/** @example problemOf({ code: 'not_found', message: 'pet 7 does not exist', status: 404 }).title // 'Not Found' */
export const problemOf = (body: ErrorBody): ProblemDetails => ({
  type: 'about:blank',
  title: STATUS_CODES[body.status] ?? 'Error',
  status: body.status,
  detail: body.message,
  code: body.code,
});

/**
 * Whether the client's `Accept` prefers problem details to the Error object
 * (JSON wins ties and ranges such as `*\/*`, so the Error object stays the
 * default).
 */
export const prefersProblem = (accept: string | undefined): boolean =>
  accept !== undefined && negotiate(['application/json', PROBLEM_JSON], accept) === PROBLEM_JSON;

/** Whether a document declares problem details for any response: only then are error answers negotiated. */
export function declaresProblems(document: OpenApiDocument): boolean {
  let found = false;
  const visit = (node: unknown): void => {
    if (found || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'content' && typeof value === 'object' && value !== null && PROBLEM_JSON in value) {
        found = true;
        return;
      }
      visit(value);
    }
  };
  visit(document.paths);
  visit(document.components?.['responses']);
  return found;
}
