/**
 * The name/value pairs of a `Cookie` header (RFC 6265 5.4), in order, a
 * repeated name kept each time (an exploded array cookie parameter is sent
 * as `id=3; id=4`); values percent-decoded when they decode (not with
 * `decode: false`, for 3.2's `style: cookie`, whose values are sent as they are). The `cookie`
 * package keeps only the first of a repeated name, hence this small parser.
 *
 * @example cookiePairs('a=1; b=x%20y; a=2') // [['a', '1'], ['b', 'x y'], ['a', '2']]
 */
export function cookiePairs(header: string | undefined, decode = true): Array<[name: string, value: string]> {
  if (header === undefined || header === '') return [];
  const pairs: Array<[string, string]> = [];
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    const name = part.slice(0, equals).trim();
    if (name === '') continue;
    let value = part.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    pairs.push([name, decode ? decodeOrKeep(value) : value]);
  }
  return pairs;
}

function decodeOrKeep(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
