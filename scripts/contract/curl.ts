/**
 * A request as a copy-paste curl command. The key under test is never
 * printed: it appears as `$API_KEY`, so CI logs and reports hold no secret.
 */
import type { HttpRequest } from './request';

/** Single-quotes for POSIX shells: 'it'\''s'. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * @example toCurl({ method: 'GET', url: 'http://127.0.0.1:3000/v1/pets', headers: { authorization: 'Bearer pas_x' } }, 'pas_x')
 *   // curl -i -X GET 'http://127.0.0.1:3000/v1/pets' -H "Authorization: Bearer $API_KEY"
 */
export function toCurl(request: HttpRequest, key: string): string {
  const parts = ['curl', '-i', '-X', request.method, quote(request.url)];
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'accept') continue;
    if (name === 'authorization' && value === `Bearer ${key}`) parts.push('-H', '"Authorization: Bearer $API_KEY"');
    else parts.push('-H', quote(`${name.replace(/(^|-)\w/g, (c) => c.toUpperCase())}: ${value}`));
  }
  if (request.body !== undefined) parts.push('--data-raw', quote(request.body));
  return parts.join(' ');
}
