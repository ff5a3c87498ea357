import type { Request, RequestHandler, Response } from 'express';
import type { Stage } from '../stage/stage';
import { contextOf } from '../context/request-context';

/**
 * Runs a middleware that only sets fixed response headers (helmet with its
 * default, nonce-free policy) once at start, and returns a stage that
 * sets the same headers with one call per request. Helmet stays the source of
 * the values; the dozen header computations per request go away.
 *
 * @example stages.push(precomputeHeaders(helmet()));
 */
export function precomputeHeaders(middleware: RequestHandler): Stage {
  const headers = new Map<string, string | string[]>();
  const stub = {
    setHeader: (name: string, value: string | number | readonly string[]) =>
      headers.set(name, typeof value === 'string' ? value : typeof value === 'number' ? String(value) : [...value]),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  let finished = false;
  void middleware({ headers: {} } as Request, stub as unknown as Response, () => (finished = true));
  if (!finished) throw new Error('precomputeHeaders: the middleware did not call next() synchronously');
  const list = [...headers].flat();
  return (req) => {
    contextOf(req).responseHeaders.setAll(list);
  };
}
