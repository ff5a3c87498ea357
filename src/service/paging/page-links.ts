import type { PageCursors, PagePosition } from './page-cursors';

/** Page cursors and the `Link` header of the next page, for one version's base path. */
export interface PageLinks {
  /** Where the page of a client's cursor starts (see PageCursors.open). */
  open: PageCursors['open'];
  /** The `Link` header value of the page after `position` of `path`: `<URL>; rel="next"` (RFC 8288). */
  next(path: string, position: PagePosition): string;
}

/**
 * @example pageLinks('/v1', cursors).next('/pets', { after: 20, limit: 20, status: 'sold' })
 * // '</v1/pets?limit=20&status=sold&cursor=…>; rel="next"'
 */
export function pageLinks(basePath: string, cursors: PageCursors): PageLinks {
  return {
    open: cursors.open,
    next(path, position) {
      // Every part is URL-safe as it is: an integer, a status of the contract's enum, a base64url cursor.
      const status = position.status === undefined ? '' : `&status=${encodeURIComponent(position.status)}`;
      return `<${basePath}${path}?limit=${position.limit}${status}&cursor=${cursors.issue(position)}>; rel="next"`;
    },
  };
}
