/**
 * The adoption invariant after a crash: the server is killed with SIGKILL in
 * the middle of a burst of orders placed, cancelled and completed and of pets
 * changed by staff (every backend); after a restart the invariant check
 * (`npm run check:adoption`, the script an operator runs) finds nothing, and
 * every write whose answer reached the client is stored.
 */
import path from 'node:path';
import { runAdoptionCheck, runKeysCli, startServer, type RunningServer } from './support/processes';
import { tempDir } from './support/paths';
import { checkedFetch } from './support/http';
import { isolatedPostgresUrl, isolationName, REDIS_URL, TEST_BACKEND } from './support/backend';

const name = isolationName();
const env: Record<string, string> = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  ...(TEST_BACKEND === 'postgres'
    ? { DATABASE_URL: isolatedPostgresUrl(name), REDIS_URL: REDIS_URL!, REDIS_KEY_PREFIX: `pas:${name}:` }
    : { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` }),
};
const roomy = ['--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'];

it('after SIGKILL mid-burst, every pet agrees with its orders and no acknowledged adoption step is lost', async () => {
  const staff = runKeysCli(['create', ...roomy, '--role', 'staff'], env).stdout.trim();
  const customers = [1, 2, 3].map(() => runKeysCli(['create', ...roomy], env).stdout.trim());
  let server: RunningServer = await startServer(env);
  const call = async (key: string, method: string, url: string, body?: object, headers: Record<string, string> = {}) =>
    checkedFetch(`${server.url}${url}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body && { 'Content-Type': method === 'PATCH' && url.startsWith('/v2/pets/') ? 'application/merge-patch+json' : 'application/json' }),
        ...headers,
      },
      ...(body && { body: JSON.stringify(body) }),
    });
  const PETS = 60;
  for (let i = 0; i < PETS; i++) expect((await call(staff, 'POST', '/v2/pets', { name: `pet ${i}`, categoryId: 1 })).status).toBe(201);

  /** What the clients were told: orders placed, and the status each order was last acknowledged in. */
  const acknowledged = new Map<number, 'placed' | 'cancelled' | 'completed'>();
  const breaches: unknown[] = [];
  let killed = false;
  let steps = 0;
  const worker = async (seed: number) => {
    let turn = seed;
    while (!killed && breaches.length === 0) {
      turn++;
      try {
        const petId = 1 + ((turn * 7919) % PETS);
        const customer = customers[turn % customers.length]!;
        if (turn % 5 === 0) {
          // Staff change a pet's status directly: refused (409) while it has a placed or completed order.
          const pet = await call(staff, 'GET', `/v2/pets/${petId}`);
          const etag = pet.response.headers.get('etag');
          if (etag) await call(staff, 'PATCH', `/v2/pets/${petId}`, { status: turn % 2 ? 'available' : 'sold' }, { 'If-Match': etag });
          steps++;
          continue;
        }
        const placed = await call(customer, 'POST', '/v2/store/orders', { petId });
        steps++;
        if (placed.status !== 201) continue;
        const orderId = (placed.body as { id: number }).id;
        acknowledged.set(orderId, 'placed');
        const close = turn % 3 === 0 ? undefined : turn % 3 === 1 ? 'cancelled' : 'completed';
        if (!close) continue;
        const closed = await call(close === 'completed' ? staff : customer, 'PATCH', `/v2/store/orders/${orderId}`, { status: close }, { 'If-Match': '"1"' });
        steps++;
        if (closed.status === 200) acknowledged.set(orderId, close);
      } catch (error) {
        // The connection died with the server (fetch's TypeError): not acknowledged. Anything else breaks the contract.
        if ((error as Error).name !== 'TypeError') breaches.push(error);
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, index) => worker(index * 1000));
  while (steps < 400 && breaches.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const code = await server.stop('SIGKILL');
  killed = true;
  await Promise.all(workers);
  expect(breaches.map(String)).toEqual([]);
  expect(code).toBeNull();

  // A restart recovers the database (SQLite's WAL); the invariant holds over all of it.
  server = await startServer(env);
  try {
    for (const [orderId, status] of acknowledged) {
      const stored = await call(staff, 'GET', `/v2/store/orders/${orderId}`);
      expect([orderId, stored.status, (stored.body as { status: string }).status]).toEqual([orderId, 200, status]);
    }
  } finally {
    await server.stop();
  }
  const check = runAdoptionCheck(env);
  console.log(`adoption crash test: ${steps} steps, ${acknowledged.size} orders acknowledged before SIGKILL; ${check.stderr.trim()}`);
  expect(check.stdout).toBe('');
  expect(check.status).toBe(0);
});
