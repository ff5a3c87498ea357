import pg from 'pg';
import { Redis } from 'ioredis';
import { keyChangesChannel } from '../src/service/shared-state';
import { openStorage } from '../src/service/storage';
import { issueApiKey } from '../src/service/keys';
import { FIXED_SETTINGS } from '../src/config';

const KEY_CACHE_TTL_MS = FIXED_SETTINGS.keyCacheTtlMs;
import { runAdoptionCheck, runKeysCli, runKeysCliAsync, startServer, type RunningServer } from './support/processes';
import { isolatedPostgresUrl, isolationName, REDIS_URL } from './support/backend';

/**
 * Two instances of the real server (separate processes, different ports) on
 * one PostgreSQL database and one Redis, as in production behind a load balancer.
 */
const name = isolationName();
const env = {
  DATABASE_URL: isolatedPostgresUrl(name),
  REDIS_URL: REDIS_URL!,
  REDIS_KEY_PREFIX: `pas:${name}:`,
  NODE_ENV: 'production',
};
let servers: RunningServer[] = [];

beforeAll(async () => {
  // Started together: both run the migrations, under the migration lock.
  servers = await Promise.all([startServer(env), startServer(env)]);
});
afterAll(async () => {
  // Graceful shutdown closes the pool and the Redis connections, then exits 0.
  expect(await Promise.all(servers.map((server) => server.stop()))).toEqual([0, 0]);
});

const createKey = (...args: string[]) => {
  const result = runKeysCli(['create', ...args], env);
  expect(result.status).toBe(0);
  return result.stdout.trim();
};
/** The id of the key with this label, from `keys list --json`. */
const idOf = (label: string): string => {
  const keys = JSON.parse(runKeysCli(['list', '--json'], env).stdout) as Array<{ id: number; label: string }>;
  return String(keys.find((key) => key.label === label)!.id);
};
const call = (server: RunningServer, key: string, path = '/v1/pets', init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } });

it('a Free key gets exactly 60 requests per minute in total across both instances, not 60 each', async () => {
  const key = createKey('--plan', 'free');
  const statuses: number[] = [];
  for (let i = 0; i < 80; i++) statuses.push((await call(servers[i % 2]!, key)).status);
  expect(statuses.filter((status) => status === 200)).toHaveLength(60);
  expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
  expect(statuses.slice(60).every((status) => status === 429)).toBe(true);
  // The ban (10 refusals by default) is shared too: both instances now say banned.
  for (const server of servers) {
    const res = await call(server, key);
    expect(res.status).toBe(429);
    expect(((await res.json()) as { code: string }).code).toBe('key_temporarily_banned');
  }
});

it('fifty customers ordering one pet at once through both instances: one 201 and 49 × 409; two staff with one If-Match: one 200, one 412', async () => {
  // Fifty customer keys, issued straight into the database (fifty CLI runs would take a minute).
  const storage = await openStorage(env.DATABASE_URL);
  const keys: string[] = [];
  try {
    for (let i = 0; i < 50; i++)
      keys.push((await issueApiKey(storage.apiKeys, { plan: 'enterprise', requestsPerMinute: 100_000, requestsPerDay: 10_000_000 })).key);
  } finally {
    await storage.close();
  }
  const staff = createKey('--plan', 'enterprise', '--rpm', '100000', '--rpd', '10000000', '--role', 'staff');
  const { id: petId } = (await (
    await call(servers[0]!, staff, '/v2/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) })
  ).json()) as {
    id: number;
  };
  const answers = await Promise.all(
    keys.map((key, index) => call(servers[index % 2]!, key, '/v2/store/orders', { method: 'POST', body: JSON.stringify({ petId }) })),
  );
  expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(49).fill(409)]);
  const { id: other } = (await (
    await call(servers[1]!, staff, '/v2/pets', { method: 'POST', body: JSON.stringify({ name: 'Max', categoryId: 1 }) })
  ).json()) as {
    id: number;
  };
  const patch = (server: RunningServer, name: string) =>
    fetch(`${server.url}/v2/pets/${other}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${staff}`, 'Content-Type': 'application/merge-patch+json', 'If-Match': '"1"' },
      body: JSON.stringify({ name }),
    });
  const both = await Promise.all([patch(servers[0]!, 'A'), patch(servers[1]!, 'B')]);
  expect(both.map((answer) => answer.status).sort()).toEqual([200, 412]);
  expect(runAdoptionCheck(env).status).toBe(0);
});

it('pets created on one instance are listed by the other', async () => {
  const key = createKey('--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000');
  const created = await (await call(servers[0]!, key, '/v1/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) })).json();
  const listed = (await (await call(servers[1]!, key, '/v1/pets?limit=100')).json()) as unknown[];
  expect(listed).toContainEqual(created);
  expect(await (await call(servers[1]!, key, `/v1/pets/${(created as { id: number }).id}`)).json()).toEqual(created);
});

it('ids stay unique under 200 concurrent creates split across both instances', async () => {
  const key = createKey('--plan', 'enterprise', '--rpm', '100000', '--rpd', '1000000');
  const responses = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      call(servers[i % 2]!, key, '/v1/pets', { method: 'POST', body: JSON.stringify({ name: `pet-${i}`, categoryId: 1 }) }),
    ),
  );
  expect(responses.map((res) => res.status)).toEqual(Array(200).fill(201));
  const ids = await Promise.all(responses.map(async (res) => ((await res.json()) as { id: number }).id));
  expect(new Set(ids).size).toBe(200);
  const client = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
  await client.connect();
  try {
    const { rows } = await client.query(`select count(*)::int as n from ${name}.pets where name like 'pet-%'`);
    expect(rows[0].n).toBe(200);
  } finally {
    await client.end();
  }
});

/**
 * Runs the keys CLI on key `id` while the test holds that key's row (SELECT
 * ... FOR UPDATE): once the CLI waits on the lock, `whileHeld` runs, then the
 * row is released and the CLI's change goes through at once. So the servers'
 * caches are filled (`whileHeld`) a known moment before the change, however
 * long the CLI took to start.
 */
async function runKeysCliOnHeldRow(id: string, args: string[], whileHeld: () => Promise<void>) {
  const client = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
  // Another connection watches: within the holder's transaction pg_stat_activity would stay as first read.
  const watcher = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
  await Promise.all([client.connect(), watcher.connect()]);
  let cli: ReturnType<typeof runKeysCliAsync> | undefined;
  try {
    await client.query('begin');
    await client.query(`select id from ${name}.api_keys where id = $1 for update`, [Number(id)]);
    const { rows } = await client.query('select pg_backend_pid() as pid');
    let exited = false;
    cli = runKeysCliAsync(args, env);
    void cli.then(() => (exited = true));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const waiting = await watcher.query('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [rows[0].pid]);
      if (waiting.rows[0].n > 0) break;
      if (exited) throw new Error(`keys ${args.join(' ')} finished without waiting on the held row: ${JSON.stringify(await cli)}`);
      if (Date.now() > deadline) throw new Error(`keys ${args.join(' ')} never reached the held row`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The CLI's statement times out after 5 s: whileHeld must be quick (a few requests).
    await whileHeld();
  } finally {
    await client.query('commit').catch(() => undefined);
    await Promise.all([client.end(), watcher.end()]);
  }
  return { released: Date.now(), cli };
}

/**
 * Polls each server with `key` until it answers 401; resolves with when each
 * refusal arrived. Fails past 5 s from `since`.
 */
const refusedAt = (key: string, since: number): Promise<number[]> =>
  Promise.all(
    servers.map(async (server) => {
      while ((await call(server, key)).status !== 401) {
        expect(Date.now() - since).toBeLessThan(5_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return Date.now();
    }),
  );

/**
 * The first request with a new key on each server: a cache miss that caches
 * the key for KEY_CACHE_TTL_MS from some moment after the returned start time.
 */
const fillCaches = async (key: string): Promise<number[]> => {
  const filled: number[] = [];
  for (const server of servers) {
    filled.push(Date.now());
    expect((await call(server, key)).status).toBe(200);
  }
  return filled;
};

it('a key revoked with the CLI is refused by both instances within 5 seconds, before their cached copy expires', async () => {
  const key = createKey('--plan', 'pro', '--label', 'to revoke');
  const id = idOf('to revoke');
  let filled: number[] = [];
  const { released, cli } = await runKeysCliOnHeldRow(id, ['revoke', id], async () => {
    filled = await fillCaches(key);
  });
  const refused = await refusedAt(key, released);
  expect((await cli!).status).toBe(0);
  console.log(`revocation seen by the instances ${refused.map((at) => at - released).join(' and ')} ms after the row was released`);
  // Through Redis, at once: each instance refused the key while its cached copy (KEY_CACHE_TTL_MS = 2 s
  // from the request that cached it) would still have served it. A margin of seconds, not a race with
  // the CLI's start-up: the cache was filled while the CLI waited on the key's row.
  for (const [i, at] of refused.entries()) expect(at - filled[i]!).toBeLessThan(KEY_CACHE_TTL_MS);
});

it('a key rotated with the CLI: the old secret is refused by both instances at once, the new one works with the same id and plan', async () => {
  const old = createKey('--plan', 'pro', '--label', 'to rotate');
  const id = idOf('to rotate');
  // The CLI announces the change on the key-change channel (the servers' caches drop the key on it).
  const subscriber = new Redis(REDIS_URL!);
  try {
    const announced: string[] = [];
    await subscriber.subscribe(keyChangesChannel(env.REDIS_KEY_PREFIX));
    subscriber.on('message', (_channel: string, message: string) => announced.push(message));
    let filled: number[] = [];
    const { released, cli } = await runKeysCliOnHeldRow(id, ['rotate', id], async () => {
      filled = await fillCaches(old);
    });
    const refused = await refusedAt(old, released);
    const rotated = await cli!;
    expect(rotated.status).toBe(0);
    expect(rotated.stderr).toContain('the old secret is refused at once');
    // Through Redis, at once: the 2 s key cache alone would still be serving the old secret (see the revocation test).
    for (const [i, at] of refused.entries()) expect(at - filled[i]!).toBeLessThan(KEY_CACHE_TTL_MS);
    const fresh = rotated.stdout.trim();
    for (const server of servers) {
      const res = await call(server, fresh);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toContain('"minute";q=300;'); // still pro
    }
    const view = JSON.parse(runKeysCli(['show', id, '--json'], env).stdout) as { id: number; plan: string; prefix: string };
    expect(view).toMatchObject({ id: Number(id), plan: 'pro', prefix: fresh.slice(0, 10) });
    expect(announced).toEqual([id]);
  } finally {
    subscriber.disconnect();
  }
});

it('a create retried with one Idempotency-Key on either instance stores exactly one pet; /v1 and /v2 are one store', async () => {
  const key = createKey('--plan', 'business', '--label', 'idempotent');
  const send = (server: RunningServer, version: string) =>
    fetch(`${server.url}/${version}/pets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'retry-me' },
      body: JSON.stringify({ name: 'Once', categoryId: 7 }),
    });
  // Concurrent retries on both instances and both versions: 201 (the first or a replay) or 409 (the first still in flight).
  const first = await Promise.all([send(servers[0]!, 'v1'), send(servers[1]!, 'v1'), send(servers[0]!, 'v2'), send(servers[1]!, 'v2')]);
  expect(first.every((res) => res.status === 201 || res.status === 409)).toBe(true);
  // Retried until every instance answers 201: always the same pet.
  const ids = new Set<number>();
  for (const server of [...servers, ...servers]) {
    const res = await send(server, 'v2');
    expect(res.status).toBe(201);
    ids.add(((await res.json()) as { id: number }).id);
  }
  expect(ids.size).toBe(1);
  // Every stored pet, page by page: one is named Once.
  const names: string[] = [];
  for (let url: string | undefined = '/v1/pets?limit=100'; url !== undefined; ) {
    const page = await call(servers[0]!, key, url);
    names.push(...((await page.json()) as Array<{ name: string }>).map((pet) => pet.name));
    url = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
  }
  expect(names.filter((name) => name === 'Once')).toHaveLength(1);
});

it('a next-page link from one instance is followed on the other', async () => {
  const key = createKey('--plan', 'business', '--label', 'pager');
  for (let i = 0; i < 3; i++) {
    const res = await call(servers[i % 2]!, key, '/v1/pets', { method: 'POST', body: JSON.stringify({ name: `page ${i}`, categoryId: 9, status: 'pending' }) });
    expect(res.status).toBe(201);
  }
  // Every page from the other instance than the one before.
  const names: string[] = [];
  let links = 0;
  for (let url: string | undefined = '/v2/pets?limit=2&status=pending', turn = 0; url !== undefined; turn++) {
    const page = await call(servers[turn % 2]!, key, url);
    expect(page.status).toBe(200);
    names.push(...((await page.json()) as Array<{ name: string }>).map((pet) => pet.name));
    url = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
    if (url) {
      expect(url).toMatch(/^\/v2\/pets\?limit=2&status=pending&cursor=/);
      links++;
    }
  }
  expect(links).toBeGreaterThan(0);
  expect(names.filter((name) => name.startsWith('page '))).toEqual(['page 0', 'page 1', 'page 2']);
});
