/**
 * A contract path as a regular expression over the raw (undecoded) request
 * path, matched the way Express routes match (case-insensitive, optional
 * trailing slash), without decoding its parameters: middleware that runs
 * before the rate limits must not fail on a bad one such as `/pets/%FF`.
 *
 * @example pathPattern('/pets/{petId}').test('/pets/%FF') // true
 */
export function pathPattern(contractPath: string): RegExp {
  const literal = contractPath.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}/?$`, 'i');
}
