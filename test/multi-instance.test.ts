import pg from 'pg';
import { Redis } from 'ioredis';
import { keyChangesChannel } from '../src/shared-state/redis-state';
import { runKeysCli, startServer, type RunningServer } from './support/processes';
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

it('a key revoked with the CLI is refused by both instances within 5 seconds', async () => {
  const key = createKey('--plan', 'pro', '--label', 'to revoke');
  for (const server of servers) expect((await call(server, key)).status).toBe(200);
  const id = idOf('to revoke');
  const started = Date.now();
  expect(runKeysCli(['revoke', id!], env).status).toBe(0);
  const revokedAt = Date.now();
  for (const server of servers) {
    while ((await call(server, key)).status !== 401) {
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const seenAfter = Date.now() - revokedAt;
  console.log(`revocation seen by both instances ${seenAfter} ms after the CLI finished (${revokedAt - started} ms CLI run)`);
  // Through Redis, at once: the 2 s key cache alone would still be serving the key now.
  expect(seenAfter).toBeLessThan(500);
});

it('a key rotated with the CLI: the old secret is refused by both instances at once, the new one works with the same id and plan', async () => {
  const old = createKey('--plan', 'pro', '--label', 'to rotate');
  for (const server of servers) expect((await call(server, old)).status).toBe(200);
  const id = idOf('to rotate');
  // The CLI announces the change on the key-change channel (the servers' caches drop the key on it).
  const subscriber = new Redis(REDIS_URL!);
  const announced: string[] = [];
  await subscriber.subscribe(keyChangesChannel(env.REDIS_KEY_PREFIX));
  subscriber.on('message', (_channel: string, message: string) => announced.push(message));
  const rotated = runKeysCli(['rotate', id], env);
  expect(rotated.status).toBe(0);
  expect(rotated.stderr).toContain('the old secret is refused at once');
  const rotatedAt = Date.now();
  for (const server of servers) {
    while ((await call(server, old)).status !== 401) {
      // Through Redis, at once: the 2 s key cache alone would still be serving the old secret.
      expect(Date.now() - rotatedAt).toBeLessThan(500);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const fresh = rotated.stdout.trim();
  for (const server of servers) {
    const res = await call(server, fresh);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toContain('"minute";q=300;'); // still pro
  }
  const view = JSON.parse(runKeysCli(['show', id, '--json'], env).stdout) as { id: number; plan: string; prefix: string };
  expect(view).toMatchObject({ id: Number(id), plan: 'pro', prefix: fresh.slice(0, 10) });
  expect(announced).toEqual([id]);
  subscriber.disconnect();
});
