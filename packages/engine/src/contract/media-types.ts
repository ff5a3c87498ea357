/**
 * Media types as the engine treats them: how a body of each kind is parsed
 * and written, and which declared media type a request's `Content-Type` or
 * an `Accept` range matches.
 *
 * - `json`: `application/json` and every `+json` or `/json` type;
 * - `form`: `application/x-www-form-urlencoded`;
 * - `multipart`: `multipart/form-data` (other multipart types are `binary`);
 * - `text`: `text/*` (but XML), as a string;
 * - `xml`: `application/xml`, `text/xml`, `+xml`: refused when the contract
 *   is loaded (see refusals.ts);
 * - `binary`: anything else (`application/octet-stream`, `image/png`,
 *   `application/pdf`, `*\/*`...), as bytes.
 */
export type MediaKind = 'json' | 'form' | 'multipart' | 'text' | 'xml' | 'binary';

/** The kind of a media type (lower-case, without parameters). @example mediaKind('application/problem+json') // 'json' */
export function mediaKind(mediaType: string): MediaKind {
  const type = essence(mediaType);
  if (type === 'application/json' || type.endsWith('+json') || type.endsWith('/json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'multipart/form-data') return 'multipart';
  if (type.startsWith('text/')) return 'text';
  return 'binary';
}

/** `Application/JSON; charset=utf-8` → `application/json`. */
export const essence = (contentType: string): string => contentType.split(';', 1)[0]!.trim().toLowerCase();

/** Whether a declared media type (possibly a range: `image/*`, `*\/*`) covers a concrete one. */
export function covers(declared: string, actual: string): boolean {
  const range = essence(declared);
  const type = essence(actual);
  if (range === '*/*' || range === type) return true;
  if (range.endsWith('/*')) return type.startsWith(range.slice(0, -1));
  return false;
}

/**
 * The declared media type (a key of an OpenAPI `content` map) that a
 * request's Content-Type selects: the exact type first, then the most
 * specific range (`image/*` before `*\/*`), as OpenAPI says.
 *
 * @example selectDeclared(['application/json', 'image/*'], 'image/png') // 'image/*'
 */
export function selectDeclared(declared: readonly string[], contentType: string): string | undefined {
  const type = essence(contentType);
  const exact = declared.find((candidate) => essence(candidate) === type);
  if (exact) return exact;
  const ranges = declared.filter((candidate) => covers(candidate, type));
  return ranges.sort((a, b) => specificity(b) - specificity(a))[0];
}

const specificity = (range: string): number => (essence(range) === '*/*' ? 0 : essence(range).endsWith('/*') ? 1 : 2);

/** One range of an Accept header with its weight. */
interface AcceptRange {
  range: string;
  q: number;
  specificity: number;
}

/**
 * The ranges of an Accept header (RFC 9110 12.5.1), best first; an absent or
 * empty header accepts anything.
 */
export function parseAccept(header: string | undefined): AcceptRange[] {
  if (header === undefined || header.trim() === '') return [{ range: '*/*', q: 1, specificity: 0 }];
  const ranges: AcceptRange[] = [];
  for (const part of header.split(',')) {
    const [rawRange, ...params] = part.split(';');
    const range = rawRange!.trim().toLowerCase();
    if (!/^[^/\s]+\/[^/\s]+$/.test(range)) continue;
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    ranges.push({ range, q, specificity: specificity(range) });
  }
  return ranges.sort((a, b) => b.q - a.q || b.specificity - a.specificity);
}

/**
 * Of the media types an answer can be sent as (in the order the server
 * prefers them), the one the client accepts best; undefined when it accepts
 * none. A type the client names explicitly beats one it only accepts
 * through a range (`*\/*`), and its own order breaks ties.
 *
 * @example negotiate(['application/json', 'text/csv'], 'text/csv, application/json;q=0.5') // 'text/csv'
 */
export function negotiate(offered: readonly string[], accept: string | undefined): string | undefined {
  const ranges = parseAccept(accept);
  let best: { type: string; q: number; specificity: number } | undefined;
  for (const type of offered) {
    // A wildcard the server offers (`image/*`) is matched by the client's ranges as a type of that family.
    const candidates = ranges.filter((range) => covers(range.range, type) || covers(type, range.range));
    const match = candidates.sort((a, b) => b.specificity - a.specificity)[0];
    if (!match || match.q === 0) continue;
    if (!best || match.q > best.q || (match.q === best.q && match.specificity > best.specificity)) best = { type, q: match.q, specificity: match.specificity };
  }
  return best?.type;
}
