import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { runKeysCli, startServer } from './support/processes';
import { tempDir } from './support/paths';
import { checkedFetch } from './support/http';

/**
 * Crash safety of the embedded default: kill -9 the server in the middle of a
 * burst of creates; after a restart every pet whose 201 reached the client is there.
 */
it('no acknowledged create is lost when the server is killed with SIGKILL', async () => {
  const file = path.join(tempDir(), 'pets.db');
  const env = { DATABASE_URL: `sqlite:${file}`, NODE_ENV: 'production', LOG_LEVEL: 'info' };
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'], env).stdout.trim();
  const server = await startServer(env);

  const acknowledged: number[] = [];
  let failed = 0;
  let killed = false;
  /** Answers that break the contract: they stop the burst and fail the test. */
  const breaches: unknown[] = [];
  const worker = async () => {
    while (!killed && breaches.length === 0) {
      try {
        const res = await checkedFetch(`${server.url}/v1/pets`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'burst', categoryId: 1 }),
        });
        if (res.status === 201) acknowledged.push((res.body as { id: number }).id);
      } catch (error) {
        // fetch's TypeError (of Node's realm, hence by name): the connection died with the server, not acknowledged.
        // Anything else is a breach of the contract.
        if ((error as Error).name === 'TypeError') failed++;
        else breaches.push(error);
      }
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  while (acknowledged.length < 300 && breaches.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const code = await server.stop('SIGKILL');
  killed = true;
  await Promise.all(workers);
  expect(breaches.map(String)).toEqual([]);
  expect(code).toBeNull(); // really killed, no graceful shutdown

  // A restart recovers the WAL; then read what is stored.
  const again = await startServer(env);
  await again.stop();
  const db = new BetterSqlite3(file, { readonly: true });
  const stored = new Set(
    db
      .prepare('select id from pets')
      .all()
      .map((row) => (row as { id: number }).id),
  );
  db.close();
  const lost = acknowledged.filter((id) => !stored.has(id));
  console.log(`crash test: ${acknowledged.length} creates acknowledged before SIGKILL, ${failed} cut off, ${stored.size} stored, lost: ${lost.length}`);
  expect(lost).toEqual([]);
});
