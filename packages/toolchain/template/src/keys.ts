/**
 * The project's API keys, in one append-only file of JSON lines (KEYS_FILE):
 * `npm run keys` appends, the server reads. A key is stored only as its
 * SHA-256 (a key is 256 random bits, so a fast hash is enough), and a
 * revocation is one more line. Each line is one append of one short write,
 * so concurrent `keys create` never lose each other's lines; a line cut
 * short (a full disk, a crash) is skipped, and the next append ends it first. Replace this file to keep keys elsewhere: the
 * server needs only `check`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, closeSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { ApiError, DependencyUnavailable, type Principal } from '@spec-first/engine';

/** One key as `keys list` shows it: never the key itself. */
export interface KeyRecord {
  readonly id: string;
  readonly label: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
}

type Line = { op: 'create'; id: string; hash: string; label: string; createdAt: string } | { op: 'revoke'; id: string; revokedAt: string };

function lastByte(file: string, size: number): number {
  const fd = openSync(file, 'r');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, size - 1);
    return byte[0]!;
  } finally {
    closeSync(fd);
  }
}

const hashOf = (key: string): string => createHash('sha256').update(key).digest('hex');

/**
 * The key store of `file`.
 *
 * @example const keys = keyStore('data/keys.jsonl'); const { key } = keys.create('ci'); keys.check(key).principal // 'key:k_…'
 */
export function keyStore(file: string) {
  let cache: { size: number; mtimeMs: number; byHash: Map<string, string>; records: KeyRecord[] } | undefined;

  const read = () => {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return { byHash: new Map<string, string>(), records: [] as KeyRecord[] };
    if (cache && cache.size === stat.size && cache.mtimeMs === stat.mtimeMs) return cache;
    const byId = new Map<string, KeyRecord & { hash: string }>();
    for (const text of readFileSync(file, 'utf8').split('\n')) {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        continue;
      }
      if (typeof line !== 'object' || line === null) continue;
      if (line.op === 'create') byId.set(line.id, { id: line.id, hash: line.hash, label: line.label, createdAt: line.createdAt });
      else if (line.op === 'revoke' && byId.has(line.id)) byId.set(line.id, { ...byId.get(line.id)!, revokedAt: line.revokedAt });
    }
    const records = [...byId.values()];
    const byHash = new Map(records.filter((record) => record.revokedAt === undefined).map((record) => [record.hash, record.id]));
    cache = { size: stat.size, mtimeMs: stat.mtimeMs, byHash, records: records.map(({ hash: _hash, ...record }) => record) };
    return cache;
  };

  const append = (line: Line): void => {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // A line cut short (a full disk, a crash) is ended first, so it cannot swallow this one.
    const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    const cut = size > 0 && lastByte(file, size) !== 0x0a;
    appendFileSync(file, `${cut ? '\n' : ''}${JSON.stringify(line)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  };

  return {
    /** The caller a key identifies; a 401 Error object for any other key. */
    check(key: string): Principal {
      let known: Map<string, string>;
      try {
        known = read().byHash;
      } catch (error) {
        // The file is there but cannot be read (permissions, a folder in its place): the server's problem, not the caller's.
        throw new DependencyUnavailable(`the key store cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const id = known.get(hashOf(key));
      if (id === undefined) throw new ApiError(401, 'unauthorized', 'the API key is not valid (unknown or revoked): create one with npm run keys -- create');
      return { principal: `key:${id}` };
    },
    /** A new key: shown once, stored only as its hash. */
    create(label = ''): { id: string; key: string } {
      const id = `k_${randomBytes(6).toString('hex')}`;
      const key = `sk_${randomBytes(32).toString('base64url')}`;
      append({ op: 'create', id, hash: hashOf(key), label, createdAt: new Date().toISOString() });
      return { id, key };
    },
    /** Revokes a key by its id; false when there is no such key. */
    revoke(id: string): boolean {
      if (!read().records.some((record) => record.id === id)) return false;
      append({ op: 'revoke', id, revokedAt: new Date().toISOString() });
      return true;
    },
    list(): readonly KeyRecord[] {
      return read().records;
    },
  };
}
