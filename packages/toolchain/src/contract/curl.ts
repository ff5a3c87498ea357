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
  // A key in the query (an apiKey scheme `in: query`) is printed as $API_KEY too.
  const parts = ['curl', '-i', '-X', request.method, request.url.includes(key) ? `"${request.url.replaceAll(key, '$API_KEY')}"` : quote(request.url)];
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'accept') continue;
    if (name === 'authorization' && value === `Bearer ${key}`) parts.push('-H', '"Authorization: Bearer $API_KEY"');
    else if (value.includes(key)) parts.push('-H', `"${name.replace(/(^|-)\w/g, (c) => c.toUpperCase())}: ${value.replaceAll(key, '$API_KEY')}"`);
    else parts.push('-H', quote(`${name.replace(/(^|-)\w/g, (c) => c.toUpperCase())}: ${value}`));
  }
  if (typeof request.body === 'string') parts.push('--data-raw', quote(request.body));
  else if (request.body instanceof FormData) {
    for (const [name, value] of request.body)
      parts.push('-F', quote(typeof value === 'string' ? `${name}=${value}` : `${name}=@${value.name};type=${value.type}`));
  } else if (request.body !== undefined) parts.push('--data-binary', quote(`<${request.body.byteLength} bytes>`));
  return parts.join(' ');
}
