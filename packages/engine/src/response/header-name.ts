/**
 * A header name the engine writes on every response, as a string V8 keeps in
 * one byte per character. A literal is shared with any equal string V8 met
 * first: after a contract whose YAML holds one character beyond Latin-1 (an
 * ellipsis, a dash, a curly quote), the names it declares (`X-RateLimit-Limit`)
 * are two-byte strings, and a two-byte name turns the whole response head
 * into one, which Node then encodes to UTF-8 the slow way on every write.
 * This copy is made from bytes, so it is one-byte whatever was loaded first.
 *
 * @example const LIMIT = headerName('X-RateLimit-Limit'); res.setHeader(LIMIT, '100');
 */
export function headerName(name: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error(`not a header name: ${JSON.stringify(name)}`);
  return Buffer.from(name, 'latin1').toString('latin1');
}
