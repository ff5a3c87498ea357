import type { OpenApiDocument, SpecOperation } from './document';
import { listOperations } from './document';

/**
 * Response headers announcing the deprecation of every operation marked
 * `deprecated: true` in the contract, computed once at start:
 *
 * - `Deprecation: @<unix seconds>` (RFC 9745) from `x-deprecated-at`, the date
 *   the operation was deprecated (a document that does not say when has no
 *   date to send: the header is left out, the others still follow);
 * - `Sunset: <HTTP-date>` (RFC 8594) from `x-sunset`;
 * - `Link: <base/path>; rel="successor-version"` from `x-successor.operationId`.
 *
 * @example deprecationHeaders(spec, '/v1').get('getPet')
 * // { Deprecation: '@1795219200', Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT', Link: '</v1/pets>; rel="successor-version"' }
 */
export function deprecationHeaders(spec: OpenApiDocument, basePath: string): Map<string, Record<string, string>> {
  const operations = listOperations(spec);
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  const result = new Map<string, Record<string, string>>();
  for (const op of operations) {
    if (op.operation.deprecated !== true) continue;
    result.set(op.operationId, headersFor(op, byId, basePath));
  }
  return result;
}

function headersFor(op: SpecOperation, byId: Map<string, SpecOperation>, basePath: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (op.operation['x-deprecated-at'] !== undefined) headers['Deprecation'] = `@${dateOf(op, 'x-deprecated-at').getTime() / 1000}`;
  if (op.operation['x-sunset'] !== undefined) headers['Sunset'] = dateOf(op, 'x-sunset').toUTCString();
  const successorId = op.operation['x-successor']?.operationId;
  if (successorId !== undefined) {
    const successor = byId.get(successorId) ?? [...byId.values()].find((candidate) => candidate.documentId === successorId);
    if (!successor) throw new Error(`${op.operationId}: x-successor ${successorId} is not an operation`);
    headers['Link'] = `<${basePath}${successor.path}>; rel="successor-version"`;
  }
  return headers;
}

export function dateOf(op: SpecOperation, extension: 'x-deprecated-at' | 'x-sunset'): Date {
  const value = op.operation[extension];
  const date = new Date(`${String(value)}T00:00:00Z`);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime())) {
    throw new Error(`${op.operationId} is deprecated: ${extension} must be a YYYY-MM-DD date, got ${JSON.stringify(value)}`);
  }
  return date;
}
