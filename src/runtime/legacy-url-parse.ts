import { parse } from 'node:url';

/**
 * Node 24 deprecates `url.parse()` (DEP0169) and, until it has warned once,
 * inspects the caller's stack on every call to tell whether it comes from
 * node_modules (which is never warned about). express-openapi-validator calls
 * it for every request it validates, so each such request paid for a stack
 * capture (bench/results/profile.md shows it when it comes back). One call from here, with deprecation
 * output silenced for that call only, sets Node's "warned" flag: the check
 * stops, nothing is printed, and other deprecation warnings still are.
 *
 * @example settleUrlParseDeprecation(); // once, at start
 */
export function settleUrlParseDeprecation(): void {
  const silenced = process.noDeprecation;
  process.noDeprecation = true;
  try {
    parse('/');
  } finally {
    process.noDeprecation = silenced;
  }
}
