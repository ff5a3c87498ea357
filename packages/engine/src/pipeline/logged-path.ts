import type { Request } from 'express';

/** A client chooses its URL: the logged path is cut, so a line stays small. */
const MAX_LOGGED_PATH = 256;

/** The request path, without the query string (it may carry what people searched for). */
export function loggedPath(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}
