// The service code both bench peers run (eov-peer/server.mjs, fastify-peer/server.mjs):
// the project's own rules, written once so the two peers differ only in their
// stack. It imports node: modules only, never a package: each peer passes in
// its own better-sqlite3 (from its own node_modules), so nothing here can
// reach the project's node_modules.
//
// What it does, as the project does it (src/service/...):
// - API keys: `Authorization: Bearer pas_<43 base64url>`, looked up by the
//   SHA-256 hex of the key in `api_keys.key_hash`; a valid key is cached in
//   memory for 2 s (the project's KEY_CACHE_TTL_MS default); a revoked key is
//   refused like an unknown one;
// - plan limits per minute and per day (src/service/plans/plans.ts);
// - pets from the `pets` table, keyset paging (`id > after ORDER BY id LIMIT
//   limit + 1`) and the `Link: <...>; rel="next"` of the next page, its cursor
//   signed with the database's `page-cursors` secret exactly as
//   src/service/paging/page-cursors.ts signs it (a peer's cursor works on the
//   project and back), issued cursors cached as there;
// - the Deprecation / Sunset / Link headers of a deprecated operation, from its
//   x-deprecated-at, x-sunset and x-successor extensions in the contract;
// - adoption orders (v2 placeOrder) as src/service/storage/kysely-storage.ts
//   places them: in one transaction, the pet taken from `available` to
//   `pending` by a compare-and-set, then the order inserted.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What the bench gives a peer (bench/lib/peers.ts): its port, the database it seeded, where the access log goes. */
export const settings = {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
  databaseFile: required('DATABASE_FILE'),
  accessLogFile: required('ACCESS_LOG_FILE'),
  /** The contract, as the project serves it. */
  contract: process.env.OPENAPI_FILE ?? path.join(root, 'openapi/v1/openapi.yaml'),
  /** The base path of the contract's servers (its URLs end in /v1). */
  basePath: '/v1',
  /** The v2 contract, for placeOrder (the peers serve no other v2 operation). */
  v2Contract: path.join(root, 'openapi/v2/openapi.yaml'),
  v2BasePath: '/v2',
};

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/**
 * Opens the SQLite file the bench seeded with the pragmas the project's
 * backend sets (src/service/storage/sqlite-backend.ts): WAL, synchronous =
 * NORMAL (a commit is durable across a process crash), a busy timeout, SQLite's
 * own page-cache size.
 */
export function openDatabase(Database, file) {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -2000');
  return db;
}

// ---------------------------------------------------------------- keys and plans

const PLAN_LIMITS = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};
/** Requests without a valid key are counted per client IP: 60 a minute (the project's RATE_LIMIT_IP_PER_MINUTE default). */
export const IP_LIMIT_PER_MINUTE = 60;
const KEY_PATTERN = /^pas_[A-Za-z0-9_-]{43}$/;
const KEY_CACHE_TTL_MS = 2_000;
const KEY_CACHE_MAX = 10_000;

export const MISSING_KEY = 'missing API key: send Authorization: Bearer <API_KEY>';
export const INVALID_KEY = 'invalid API key';

/**
 * The key check: `authenticate(authorizationHeader)` answers `{ caller }` or
 * `{ failure }` (the 401's message). A caller is `{ keyId, principal, plan,
 * perMinute, perDay }`.
 */
export function keyCheck(db) {
  const byHash = db.prepare('SELECT id, plan, requests_per_minute, requests_per_day, revoked_at FROM api_keys WHERE key_hash = ?');
  const cache = new Map();
  return function authenticate(header) {
    if (header === undefined) return { failure: MISSING_KEY };
    const space = header.indexOf(' ');
    if (space === -1 || header.slice(0, space).toLowerCase() !== 'bearer') return { failure: MISSING_KEY };
    const key = header.slice(space + 1).trim();
    if (!KEY_PATTERN.test(key)) return { failure: INVALID_KEY };
    const now = Date.now();
    const cached = cache.get(key);
    if (cached !== undefined && cached.expires > now) return cached.result;
    const row = byHash.get(createHash('sha256').update(key).digest('hex'));
    if (row === undefined || row.revoked_at !== null) return { failure: INVALID_KEY };
    const limits = row.plan === 'enterprise' ? { perMinute: row.requests_per_minute, perDay: row.requests_per_day } : PLAN_LIMITS[row.plan];
    const result = { caller: { keyId: row.id, principal: `key:${row.id}`, plan: row.plan, ...limits } };
    if (cache.size >= KEY_CACHE_MAX) cache.clear();
    cache.set(key, { result, expires: now + KEY_CACHE_TTL_MS });
    return result;
  };
}

// ---------------------------------------------------------------- pets

/** The pets of the database, and the page links of the listing. */
export function petStore(db) {
  const columns = 'id, name, category_id AS categoryId, status';
  const statements = {
    list: db.prepare(`SELECT ${columns} FROM pets WHERE id > ? ORDER BY id LIMIT ?`),
    listByStatus: db.prepare(`SELECT ${columns} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`),
    get: db.prepare(`SELECT ${columns} FROM pets WHERE id = ?`),
    create: db.prepare(`INSERT INTO pets (name, category_id, status, created_at, created_by_request) VALUES (?, ?, ?, ?, NULL) RETURNING ${columns}`),
  };
  const secret = db.prepare("SELECT value FROM secrets WHERE name = 'page-cursors'").get()?.value;
  if (secret === undefined) throw new Error('the database has no page-cursors secret: was it migrated by the project (npm run keys)?');
  const cursors = pageCursors(secret);
  return {
    /**
     * A page of pets: `{ body }`, plus `link` (the `Link` header of the next
     * page) when more follow, or `{ badCursor: true }` for a cursor this
     * service did not issue for this limit and status.
     */
    list({ limit, status, cursor }) {
      const after = cursor === undefined ? 0 : cursors.open(cursor, { limit, status });
      if (after === undefined) return { badCursor: true };
      const found = status === undefined ? statements.list.all(after, limit + 1) : statements.listByStatus.all(status, after, limit + 1);
      if (found.length <= limit) return { body: found };
      const page = found.slice(0, limit);
      const position = { after: page[page.length - 1].id, limit, status };
      const statusPart = status === undefined ? '' : `&status=${encodeURIComponent(status)}`;
      return { body: page, link: `<${settings.basePath}/pets?limit=${limit}${statusPart}&cursor=${cursors.issue(position)}>; rel="next"` };
    },
    get: (id) => statements.get.get(id),
    create: ({ name, categoryId, status = 'available' }) => statements.create.get(name, categoryId, status, new Date().toISOString()),
  };
}

// ---------------------------------------------------------------- orders

/**
 * Adoption orders on the project's tables (its migration 0006_adoption:
 * `orders`, at most one `placed` order per pet by the partial unique index
 * `orders_one_placed`). `place(petId, owner)` answers `{ outcome: 'placed',
 * order }`, `{ outcome: 'not_available', status }` or `{ outcome: 'no_pet' }`,
 * as the project's KyselyOrderRepository.place does.
 */
export function orderStore(db) {
  const hasOrders = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'orders'").get() !== undefined;
  if (!hasOrders) throw new Error('the database has no orders table: was it migrated by the project (npm run keys) at 0006_adoption or later?');
  const statements = {
    // The compare-and-set on the status is what lets one of many orders for a pet win: the others find it pending.
    take: db.prepare("UPDATE pets SET status = 'pending', status_source = 'order', version = version + 1 WHERE id = ? AND status = 'available'"),
    statusOf: db.prepare('SELECT status FROM pets WHERE id = ?'),
    insert: db.prepare(
      "INSERT INTO orders (pet_id, owner, status, created_at, updated_at, created_by_request) VALUES (?, ?, 'placed', ?, ?, NULL) RETURNING id, pet_id AS petId, status, created_at AS createdAt, updated_at AS updatedAt",
    ),
  };
  // better-sqlite3's transaction function, as its docs show: BEGIN, the function, COMMIT (ROLLBACK if it throws).
  const place = db.transaction((petId, owner) => {
    if (statements.take.run(petId).changes === 0) {
      const pet = statements.statusOf.get(petId);
      return pet ? { outcome: 'not_available', status: pet.status } : { outcome: 'no_pet' };
    }
    const at = new Date().toISOString();
    return { outcome: 'placed', order: statements.insert.get(petId, owner, at, at) };
  });
  return { place };
}

const TAG_BYTES = 16;
const TAG_CHARACTERS = Math.ceil((TAG_BYTES * 4) / 3);
const ISSUED_CURSORS_KEPT = 10_000;

/** src/service/paging/page-cursors.ts, the same bytes: base64url(JSON position) + base64url(HMAC-SHA256 tag, 16 bytes). */
function pageCursors(secret) {
  const tagOf = (payload) => createHmac('sha256', secret).update(payload).digest().subarray(0, TAG_BYTES);
  const issued = new Map();
  return {
    issue({ after, limit, status }) {
      const position = `${after} ${limit} ${status ?? ''}`;
      let cursor = issued.get(position);
      if (cursor === undefined) {
        const payload = Buffer.from(JSON.stringify([after, limit, status ?? null])).toString('base64url');
        cursor = payload + tagOf(payload).toString('base64url');
        if (issued.size >= ISSUED_CURSORS_KEPT) issued.clear();
        issued.set(position, cursor);
      }
      return cursor;
    },
    open(cursor, { limit, status }) {
      if (cursor.length <= TAG_CHARACTERS) return undefined;
      const payload = cursor.slice(0, -TAG_CHARACTERS);
      const written = cursor.slice(-TAG_CHARACTERS);
      const tag = Buffer.from(written, 'base64url');
      if (tag.length !== TAG_BYTES || tag.toString('base64url') !== written || !timingSafeEqual(tag, tagOf(payload))) return undefined;
      let position;
      try {
        position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!Array.isArray(position) || position.length !== 3) return undefined;
      const [after, positionLimit, positionStatus] = position;
      if (!Number.isSafeInteger(after) || after < 0 || positionLimit !== limit || positionStatus !== (status ?? null)) return undefined;
      return after;
    },
  };
}

// ---------------------------------------------------------------- contract extensions

/**
 * The headers every response of a deprecated operation carries (as
 * packages/engine/src/contract/deprecation.ts derives them), from the operation's
 * extensions: `Deprecation: @<unix seconds>` (x-deprecated-at), `Sunset`
 * (x-sunset), `Link: <successor>; rel="successor-version"` (x-successor, its
 * path from `pathOf(operationId)`). Undefined for an operation that is not
 * deprecated. (fastify-openapi-glue keeps an operation's x- extensions in its
 * route schema, not `deprecated`: the extensions alone are enough.)
 */
export function deprecationHeaders(operation, pathOf) {
  if (operation?.deprecated !== true && operation?.['x-deprecated-at'] === undefined && operation?.['x-sunset'] === undefined) return undefined;
  const date = (value) => new Date(`${value}T00:00:00Z`);
  const headers = {};
  if (operation['x-deprecated-at']) headers.Deprecation = `@${date(operation['x-deprecated-at']).getTime() / 1000}`;
  if (operation['x-sunset']) headers.Sunset = date(operation['x-sunset']).toUTCString();
  const successor = operation['x-successor']?.operationId;
  if (successor) headers.Link = `<${settings.basePath}${pathOf(successor)}>; rel="successor-version"`;
  return headers;
}

/** The contract's Error object. */
export const errorBody = (status, code, message) => ({ code, message, status });

/** The Error code of a status the validators or the frameworks answer with. */
export function codeOf(status) {
  switch (status) {
    case 400:
      return 'invalid_request';
    case 401:
      return 'unauthorized';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 406:
      return 'not_acceptable';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'internal_error' : 'invalid_request';
  }
}

/** Stops on SIGTERM/SIGINT (the bench stops servers with SIGTERM): `close` ends the server and flushes the log. */
export function stopOnSignals(close) {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 2_000).unref();
    Promise.resolve(close()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * Throws unless every package the peer names resolves inside its own
 * node_modules (`resolve` is the peer's `import.meta.resolve`): a package
 * missing there would otherwise be found, silently, in the project's
 * node_modules two folders up.
 */
export function assertOwnPackages(peerUrl, resolve, names) {
  const own = path.join(path.dirname(fileURLToPath(peerUrl)), 'node_modules') + path.sep;
  for (const name of names) {
    const resolved = fileURLToPath(resolve(name));
    if (!resolved.startsWith(own)) throw new Error(`${name} resolves to ${resolved}, outside ${own}: run npm ci in ${path.dirname(own)}`);
  }
}
