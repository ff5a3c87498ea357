/**
 * Turns a case's input into the HTTP request that is sent (and printed as
 * curl): path parameters substituted and percent-encoded, query string,
 * headers, body text.
 */
import type { RequestInput } from './cases';
import { INVALID_KEY } from './cases';
import type { Operation } from './spec';

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * @example buildRequest(getPet, { params: { petId: 7 }, auth: 'valid' }, { baseUrl: 'http://127.0.0.1:3000/v1', key: 'pas_...' })
 *   // { method: 'GET', url: 'http://127.0.0.1:3000/v1/pets/7', headers: { authorization: 'Bearer pas_...' } }
 */
export function buildRequest(operation: Operation, input: RequestInput, target: { baseUrl: string; key: string }): HttpRequest {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(asText(input.params[name])));
  const url = new URL(target.baseUrl.replace(/\/+$/, '') + path);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const parameter of operation.parameters) {
    const value = input.params[parameter.name];
    if (value === undefined) continue;
    if (parameter.in === 'query') {
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(parameter.name, asText(item));
    } else if (parameter.in === 'header') {
      headers[parameter.name.toLowerCase()] = asText(value);
    }
  }
  if (input.auth === 'valid') headers['authorization'] = `Bearer ${target.key}`;
  if (input.auth === 'invalid') headers['authorization'] = `Bearer ${INVALID_KEY}`;

  let body: string | undefined;
  if (input.rawBody !== undefined) body = input.rawBody;
  else if (operation.body && input.body !== undefined && !input.method) body = JSON.stringify(input.body);
  if (body !== undefined) {
    const contentType = input.contentType ?? 'application/json';
    if (contentType) headers['content-type'] = contentType;
  }
  return { method: input.method ?? operation.method, url: url.toString(), headers, ...(body !== undefined && { body }) };
}
