import { createHmac, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** What a cursor binds: where the next page starts, for which page size and filter. */
export interface PagePosition {
  /** The id of the last item of the previous page. */
  after: number;
  limit: number;
  status: string | undefined;
}

/** Page cursors: opaque to clients, signed so that only the server's own are accepted. */
export interface PageCursors {
  /** The cursor of the page after `position`. */
  issue(position: PagePosition): string;
  /**
   * Where the page of `cursor` starts, when this server issued it for exactly
   * this `limit` and `status`; undefined otherwise (the caller answers 400).
   */
  open(cursor: string, query: Omit<PagePosition, 'after'>): number | undefined;
}

/** How many issued cursors are remembered (each is under 100 bytes). */
const ISSUED_CURSORS_KEPT = 10_000;

/** Bytes of HMAC-SHA256 kept in a cursor: forging one takes 2^128 tries. */
const TAG_BYTES = 16;
/** The tag's length in base64url, at the end of every cursor. */
const TAG_CHARACTERS = Math.ceil((TAG_BYTES * 4) / 3);

/**
 * Page cursors signed with `secret` (HMAC-SHA256), the secret every instance
 * on the same database shares (created by the migrations), so a cursor from
 * one instance works on every other and after a restart. A cursor is
 * `base64url(position) base64url(tag)` run together, but clients must not rely on
 * it: they follow the `Link` header.
 *
 * @example
 * const cursors = pageCursors(secret);
 * cursors.open(cursors.issue({ after: 20, limit: 20, status: undefined }), { limit: 20, status: undefined }) // 20
 */
export function pageCursors(secret: string): PageCursors {
  const tagOf = (payload: string): Buffer => createHmac('sha256', secret).update(payload).digest().subarray(0, TAG_BYTES);
  // A cursor is a pure function of its position, and popular pages (the first
  // ones of a listing) are asked for again and again: keep the recent ones.
  const issued = new LRUCache<string, string>({ max: ISSUED_CURSORS_KEPT });
  return {
    issue({ after, limit, status }) {
      const position = `${after} ${limit} ${status ?? ''}`;
      let cursor = issued.get(position);
      if (cursor === undefined) {
        const payload = Buffer.from(JSON.stringify([after, limit, status ?? null])).toString('base64url');
        cursor = payload + tagOf(payload).toString('base64url');
        issued.set(position, cursor);
      }
      return cursor;
    },
    open(cursor, query) {
      if (cursor.length <= TAG_CHARACTERS) return undefined;
      const payload = cursor.slice(0, -TAG_CHARACTERS);
      const written = cursor.slice(-TAG_CHARACTERS);
      const tag = Buffer.from(written, 'base64url');
      // 22 base64url characters carry 132 bits for the tag's 128: the last one has slack, so
      // several spellings decode to the same tag. Only the one the server writes is accepted.
      if (tag.length !== TAG_BYTES || tag.toString('base64url') !== written || !timingSafeEqual(tag, tagOf(payload))) return undefined;
      let position: unknown;
      try {
        position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!Array.isArray(position) || position.length !== 3) return undefined;
      const [after, limit, status] = position as [unknown, unknown, unknown];
      if (!Number.isSafeInteger(after) || (after as number) < 0) return undefined;
      if (limit !== query.limit || status !== (query.status ?? null)) return undefined;
      return after as number;
    },
  };
}
