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
      const query = new URLSearchParams({ limit: String(position.limit) });
      if (position.status !== undefined) query.set('status', position.status);
      query.set('cursor', cursors.issue(position));
      return `<${basePath}${path}?${query}>; rel="next"`;
    },
  };
}
