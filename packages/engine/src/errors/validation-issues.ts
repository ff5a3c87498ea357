import type { ErrorObject } from 'ajv';

/** One broken rule of a request, e.g. `{ path: '/query/limit', message: 'must be <= 100' }` (the request validator's shape). */
export interface ValidationIssue {
  path?: string;
  message: string;
}

/**
 * Ajv's errors as issues, under `base` (`/query/limit`), the way the request
 * validator reports them: a missing or unknown property is named in the
 * path, an enum lists its values.
 *
 * @example issuesOfAjv(validate.errors, '/query/status')
 * // [{ path: '/query/status', message: 'must be equal to one of the allowed values: available, pending, sold' }]
 */
export function issuesOfAjv(errors: readonly ErrorObject[], base: string): ValidationIssue[] {
  return errors.map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string; allowedValues?: unknown[] };
    const named = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
    const path = `${base}${error.instancePath}${named === undefined ? '' : `/${named}`}`;
    const message =
      error.keyword === 'enum' && params.allowedValues ? `${error.message}: ${params.allowedValues.join(', ')}` : (error.message ?? 'is not valid');
    return { path, message };
  });
}

/** `/query/limit` + `must be <= 100` -> `query.limit must be <= 100`. */
export function describeIssue(issue: ValidationIssue): string {
  // The validator's wording when a path segment does not decode (`/pets/%FF`).
  if (issue.message === "malformed uri'") return `path ${issue.path ?? ''} is not valid percent-encoded UTF-8`;
  const field = (issue.path ?? '').replace(/^[./]+/, '').replace(/\//g, '.');
  const message = issue.message
    .replace(/^must have required property '([^']+)'$/, 'is required')
    .replace(/^must NOT have additional properties$/, 'is not allowed (unknown property)')
    .replace(/^must NOT have unevaluated properties$/, 'is not allowed (unknown property)')
    .replace(/^Unknown query parameter '([^']+)'$/, 'is not a known query parameter');
  return field ? `${field} ${message}` : message;
}

/** Issues as one message. */
export const describeIssues = (issues: readonly ValidationIssue[]): string => issues.map(describeIssue).join('; ');
