/**
 * Turns a case's input into the HTTP request that is sent (and printed as
 * curl): parameters written as their `style` and `explode` say (query,
 * path, header, cookie), credentials presented as the operation's security
 * schemes say, the body in the operation's media type (JSON, a form,
 * multipart, text or bytes).
 */
import type { RequestInput } from './cases';
import { INVALID_KEY } from './cases';
import { authorizationValue, placementOf } from '@spec-first/engine';
import type { CredentialPlacement } from '@spec-first/engine/testing';
import type { Operation, Parameter, Schema, SecurityScheme } from './spec';

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
}

/** What the run authenticates with: an API key, and an access token for oauth2 / openIdConnect schemes. */
export interface Target {
  baseUrl: string;
  key: string;
  token?: string;
}

/** A JWT that no issuer signed: three base64url parts, the last garbage. */
export const INVALID_TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vbmUifQ.eyJzdWIiOiJub2JvZHkifQ.AAAA';

/** A 1×1 PNG: the bytes of a binary body or a multipart file. */
export const PNG_1X1 = Uint8Array.from(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
);

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
/** Where a scheme's credential goes, as the server reads it (packages/engine/src/credentials). */
const placementOfScheme = (scheme: SecurityScheme): CredentialPlacement | undefined => placementOf({ ...scheme, name: scheme.parameter });

/** Whether the run's credentials can meet one requirement (every scheme of it). */
export const canMeet = (requirement: SecurityScheme[], target: Pick<Target, 'token'>): boolean =>
  requirement.every((scheme) => {
    const placement = placementOfScheme(scheme);
    return placement !== undefined && (placement.holds !== 'token' || target.token !== undefined);
  });

/** The requirement the run presents credentials for: the first it can meet. */
export const requirementFor = (operation: Operation, target: Pick<Target, 'token'>): SecurityScheme[] | undefined =>
  operation.security.find((requirement) => canMeet(requirement, target));

/** The items of a value written as text, for a style: arrays item by item, objects as name, value pairs (or name=value when exploded). */
function parts(value: unknown, explode: boolean): { items: string[]; object: boolean } {
  if (Array.isArray(value)) return { items: value.map(asText), object: false };
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([name, item]) => [name, asText(item)] as const);
    return { items: explode ? entries.map(([name, item]) => `${name}=${item}`) : entries.flat(), object: true };
  }
  return { items: [asText(value)], object: false };
}

/** A path parameter's segment, per style (simple, label, matrix), percent-encoded. */
function pathSegment(parameter: Parameter, value: unknown): string {
  const e = encodeURIComponent;
  const { items, object } = parts(value, parameter.explode);
  const encoded = items.map((item) => (parameter.explode && object ? item.split('=').map(e).join('=') : e(item)));
  if (parameter.style === 'label') return `.${encoded.join(parameter.explode ? '.' : ',')}`;
  if (parameter.style === 'matrix') {
    if (Array.isArray(value) && parameter.explode) return encoded.map((item) => `;${e(parameter.name)}=${item}`).join('');
    if (object && parameter.explode) return encoded.map((item) => `;${item}`).join('');
    return `;${e(parameter.name)}=${encoded.join(',')}`;
  }
  return encoded.join(',');
}

/** A query parameter's pairs, per style (form, spaceDelimited, pipeDelimited, deepObject). */
function queryPairs(parameter: Parameter, value: unknown): Array<[string, string]> {
  if (parameter.style === 'deepObject' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).map(([name, item]) => [`${parameter.name}[${name}]`, asText(item)]);
  }
  if (Array.isArray(value)) {
    if (parameter.explode && parameter.style === 'form') return value.map((item) => [parameter.name, asText(item)]);
    const separator = parameter.style === 'spaceDelimited' ? ' ' : parameter.style === 'pipeDelimited' ? '|' : ',';
    return [[parameter.name, value.map(asText).join(separator)]];
  }
  if (value !== null && typeof value === 'object') {
    if (parameter.explode) return Object.entries(value).map(([name, item]) => [name, asText(item)]);
    const separator = parameter.style === 'spaceDelimited' ? ' ' : parameter.style === 'pipeDelimited' ? '|' : ',';
    return [[parameter.name, parts(value, false).items.join(separator)]];
  }
  return [[parameter.name, asText(value)]];
}

/**
 * @example buildRequest(getPet, { params: { petId: 7 }, auth: 'valid' }, { baseUrl: 'http://127.0.0.1:3000/v1', key: 'pas_...' })
 *   // { method: 'GET', url: 'http://127.0.0.1:3000/v1/pets/7', headers: { authorization: 'Bearer pas_...' } }
 */
export function buildRequest(operation: Operation, input: RequestInput, target: Target): HttpRequest {
  const byName = new Map(operation.parameters.filter((parameter) => parameter.in === 'path').map((parameter) => [parameter.name, parameter]));
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = byName.get(name);
    const value = input.params[name];
    return parameter ? pathSegment(parameter, value) : encodeURIComponent(asText(value));
  });
  const url = new URL(target.baseUrl.replace(/\/+$/, '') + path);
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' };
  const cookies: string[] = [];
  for (const parameter of operation.parameters) {
    const value = input.params[parameter.name];
    if (value === undefined) continue;
    if (parameter.in === 'querystring') {
      // The whole query string is this one value: JSON text, or form fields.
      if (/json/i.test(parameter.mediaType ?? '')) url.search = `?${encodeURIComponent(JSON.stringify(value))}`;
      else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [name, field] of Object.entries(value)) {
          for (const item of Array.isArray(field) ? field : [field])
            url.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : asText(item));
        }
      } else url.search = `?${encodeURIComponent(asText(value))}`;
    } else if (parameter.in === 'query') {
      // A value given as several (a repeated parameter in a negative case) goes as is.
      if (Array.isArray(value) && !parameter.schema.type?.includes('array')) for (const item of value) url.searchParams.append(parameter.name, asText(item));
      else for (const [name, text] of queryPairs(parameter, value)) url.searchParams.append(name, text);
    } else if (parameter.in === 'header') {
      headers[parameter.name.toLowerCase()] = parts(value, parameter.explode).items.join(',');
    } else if (parameter.in === 'cookie') {
      cookies.push(`${parameter.name}=${encodeURIComponent(parts(value, false).items.join(','))}`);
    }
  }
  if (input.auth !== 'missing') {
    const requirement = requirementFor(operation, target) ?? [{ name: 'bearer', type: 'http', scheme: 'bearer' }];
    const valid = input.auth === 'valid';
    for (const scheme of requirement) {
      const placement = placementOfScheme(scheme) ?? { in: 'authorization', form: 'bearer', holds: 'key' };
      const credential = placement.holds === 'token' ? (valid ? target.token! : INVALID_TOKEN) : valid ? target.key : INVALID_KEY;
      if (placement.in === 'authorization') headers['authorization'] = authorizationValue(placement.form, credential);
      else if (placement.in === 'header') headers[placement.name.toLowerCase()] = credential;
      else if (placement.in === 'query') url.searchParams.append(placement.name, credential);
      else cookies.push(`${placement.name}=${credential}`);
    }
  }
  if (cookies.length > 0) headers['cookie'] = cookies.join('; ');

  let body: HttpRequest['body'];
  if (input.rawBody !== undefined) body = input.rawBody;
  else if (operation.body && input.body !== undefined && !input.method) body = encodeBody(operation.body, input.body);
  if (body !== undefined && !(body instanceof FormData)) {
    const contentType =
      input.contentType ??
      (input.rawBody !== undefined ? 'application/json' : operation.body?.mediaType.includes('*') ? 'application/octet-stream' : operation.body?.mediaType);
    if (contentType) headers['content-type'] = contentType;
  }
  return { method: input.method ?? operation.method, url: url.toString(), headers, ...(body !== undefined && { body }) };
}

/** A body value in its media type's form. */
function encodeBody({ kind, schema, mediaType }: NonNullable<Operation['body']>, value: unknown): HttpRequest['body'] {
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'items') {
    // One JSON value per line (a JSON text sequence: each after RS); a value that is not a list is sent as one item.
    const separator = mediaType.split(';')[0]!.trim().toLowerCase() === 'application/json-seq' ? '\x1e' : '';
    return (Array.isArray(value) ? value : [value]).map((item) => `${separator}${JSON.stringify(item)}\n`).join('');
  }
  if (kind === 'text') return asText(value);
  if (kind === 'binary') return PNG_1X1;
  const fields = value !== null && typeof value === 'object' ? Object.entries(value) : [];
  if (kind === 'form') {
    const form = new URLSearchParams();
    for (const [name, item] of fields) for (const one of Array.isArray(item) ? item : [item]) form.append(name, asText(one));
    return form.toString();
  }
  const form = new FormData();
  const isFile = (property: Schema | undefined): boolean =>
    property !== undefined && (property.format === 'binary' || property['contentMediaType'] !== undefined || isFile(property.items));
  for (const [name, item] of fields) {
    const file = isFile(schema.properties?.[name]);
    for (const one of Array.isArray(item) ? item : [item]) {
      if (file) form.append(name, new Blob([PNG_1X1], { type: 'image/png' }), `${name}.png`);
      else form.append(name, asText(one));
    }
  }
  return form;
}
