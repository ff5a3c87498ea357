import { idempotentRequests } from '../idempotency';
import { pageCursors, pageLinks } from '../paging';
import { repositoriesOf, type Storage } from '../storage';
import type { HandlerContext } from './types';

export interface HandlerContextSettings {
  /** How long Idempotency-Keys are kept, and how long a claim holds. */
  idempotency: { retentionMs: number; lockMs: number };
  /** The clock (ms since epoch) of idempotency records. */
  now: () => number;
}

/**
 * What the handlers of each version use besides their request: the
 * repositories, the page links (with the version's base path, signed with
 * the database's cursor secret) and Idempotency-Keys.
 *
 * @example const contextOf = await handlerContexts(storage, { idempotency: config.idempotency, now: Date.now }); contextOf('v1').pets;
 */
export async function handlerContexts(storage: Storage, settings: HandlerContextSettings): Promise<(version: string) => HandlerContext> {
  const cursorSecret = await storage.secrets.get('page-cursors');
  if (!cursorSecret) throw new Error('the database has no page-cursors secret (migration 0003 did not run?)');
  const cursors = pageCursors(cursorSecret);
  const shared = { ...repositoriesOf(storage), idempotency: idempotentRequests(storage.idempotencyKeys, { ...settings.idempotency, now: settings.now }) };
  return (version) => ({ ...shared, basePath: `/${version}`, pages: pageLinks(`/${version}`, cursors) });
}
