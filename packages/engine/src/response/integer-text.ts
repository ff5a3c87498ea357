/**
 * The decimal text of an integer, for values that change from request to
 * request (lengths, counters, timestamps). `String(n)` and template literals
 * go through V8's number-to-string cache, which holds on to each string it
 * made: a string for a new value outlives the young generation and stays as
 * garbage that only a full collection frees. `toFixed(0)` bypasses the cache.
 *
 * @example res.setHeader('Content-Length', integerText(Buffer.byteLength(json)));
 */
export function integerText(value: number): string {
  return value.toFixed(0);
}
