/**
 * Paging: signed, opaque page cursors and the next page's `Link` header.
 * Code outside this folder imports it from here (test/layout.test.ts checks it).
 *
 * @example const pages = pageLinks('/v1', pageCursors(secret));
 */
export { pageCursors } from './page-cursors';
export { pageLinks, type PageLinks } from './page-links';
