import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { runAdoptionCheck, runKeysCli, runServerToExit, startServer, type RunningServer } from './support/processes';
import { tempDir } from './support/paths';
import { checkedFetch } from './support/http';
import { FIXED_SETTINGS } from '../src/config';

/**
 * WORKERS=N on the embedded default (src/runtime/cluster.ts): N processes of
 * the real entry point on one SQLite file, the rate-limit counts held by the
 * cluster primary. Each request goes on a connection of its own, so the
 * primary hands them to the workers in turn; the access log's `pid` shows
 * which worker answered.
 */

const WORKERS = 2;

async function startWorkers(env: Record<string, string>): Promise<RunningServer> {
  const server = await startServer({ WORKERS: String(WORKERS), ...env });
  await waitFor(() => new RegExp(`with ${WORKERS} workers`).test(server.output()), 'every worker listening', server);
  return server;
}

async function waitFor(condition: () => boolean, what: string, server: RunningServer, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One request on a fresh connection (`Connection: close`), so the primary may give it to any worker. */
const send = (server: RunningServer, key: string, init: { method?: string; body?: unknown; path?: string } = {}) =>
  checkedFetch(`${server.url}${init.path ?? '/v1/pets'}`, {
    method: init.method ?? 'GET',
    headers: {
      Authorization: `Bearer ${key}`,
      Connection: 'close',
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    // A connection handed to a worker that is being killed may never be answered.
    signal: AbortSignal.timeout(5_000),
  });

/** The pids of the processes that wrote an access line for `path` (log lines reach stdout within a moment). */
function servingPids(server: RunningServer, path: string): Set<number> {
  const pids = new Set<number>();
  for (const line of server.output().split('\n')) {
    if (!line.includes('"msg":"request"') || !line.includes(`"path":"${path}"`)) continue;
    pids.add((JSON.parse(line) as { pid: number }).pid);
  }
  return pids;
}

function database(): { env: Record<string, string>; file: string } {
  const file = path.join(tempDir(), 'pets.db');
  return { file, env: { DATABASE_URL: `sqlite:${file}` } };
}

it(`a Free key gets exactly 60 of 70 requests, whichever of ${WORKERS} workers serves them; SIGTERM stops every worker and exits 0`, async () => {
  const { env } = database();
  const key = runKeysCli(['create', '--plan', 'free'], env).stdout.trim();
  const server = await startWorkers(env);
  try {
    const statuses: number[] = [];
    const remaining: number[] = [];
    // Ten at a time: concurrent increments from both workers meet in the primary.
    for (let batch = 0; batch < 7; batch++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => send(server, key)));
      statuses.push(...answers.map((answer) => answer.status));
      remaining.push(...answers.filter((answer) => answer.status === 200).map((answer) => Number(answer.headers['x-ratelimit-remaining'])));
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    // Each response tells the count after its own request, as in one process: 59 down to 0, each once.
    expect([...remaining].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, index) => index));
    await waitFor(() => servingPids(server, '/v1/pets').size === WORKERS, 'access lines from every worker', server);
    // Whichever worker answers the scrape, it reports the whole instance.
    for (let scrape = 0; scrape < 4; scrape++) {
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Connection: 'close' } })).text();
      expect(metrics).toMatch(/^pas_rate_limit_refusals_total\{plan="free",window="minute"\} 10$/m);
      expect(metrics).toMatch(/^pas_http_request_duration_seconds_count\{operation="listPets",method="GET",status="200",version="v1"\} 60$/m);
    }
  } finally {
    const code = await server.stop('SIGTERM');
    expect(code).toBe(0);
  }
  // Each worker drained and said so before the primary exited.
  expect(server.output().match(/"msg":"stopped"/g)).toHaveLength(WORKERS + 1);
});

it(`fifty orders for one pet at once, served by ${WORKERS} workers: one 201, 49 × 409, and the pet is pending`, async () => {
  const { env } = database();
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '100000', '--rpd', '10000000'], env).stdout.trim();
  const server = await startWorkers(env);
  try {
    const { id: petId } = (await send(server, key, { method: 'POST', path: '/v2/pets', body: { name: 'Rex', categoryId: 1 } })).body as { id: number };
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(server, key, { method: 'POST', path: '/v2/store/orders', body: { petId } })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(49).fill(409)]);
    expect(servingPids(server, '/v2/store/orders').size).toBe(WORKERS);
    expect(((await send(server, key, { path: `/v2/pets/${petId}` })).body as { status: string }).status).toBe('pending');
  } finally {
    await server.stop('SIGTERM');
  }
  expect(runAdoptionCheck(env).status).toBe(0);
});

it('a revoked key is refused by every worker within the key cache time, as with one process', async () => {
  const { env } = database();
  const key = runKeysCli(['create', '--plan', 'pro'], env).stdout.trim();
  const { id } = (JSON.parse(runKeysCli(['list', '--json'], env).stdout) as Array<{ id: number }>)[0]!;
  const server = await startWorkers(env);
  try {
    // Every worker has the key in its cache.
    for (let i = 0; i < 10; i++) expect((await send(server, key)).status).toBe(200);
    await waitFor(() => servingPids(server, '/v1/pets').size === WORKERS, 'both workers caching the key', server);
    expect(runKeysCli(['revoke', String(id)], env).status).toBe(0);
    const revokedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, FIXED_SETTINGS.keyCacheTtlMs + 100));
    const answers = await Promise.all(Array.from({ length: 10 }, () => send(server, key, { path: '/v1/pets?limit=1' })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(401));
    expect(Date.now() - revokedAt).toBeLessThan(FIXED_SETTINGS.keyCacheTtlMs + 5_000);
    await waitFor(() => servingPids(server, '/v1/pets').size === WORKERS, 'refusals from every worker', server);
  } finally {
    await server.stop('SIGTERM');
  }
});

it('a ban made by one worker is enforced by every worker at once, and made once', async () => {
  const { env } = database();
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '2', '--rpd', '1000'], env).stdout.trim();
  const server = await startWorkers({ ...env, RATE_LIMIT_BAN_AFTER: '3' });
  try {
    const codes: string[] = [];
    // 2 served, 3 refused, then the refusal past RATE_LIMIT_BAN_AFTER bans the key (in whichever worker served it).
    for (let i = 0; i < 6; i++) {
      const answer = await send(server, key);
      codes.push(answer.status === 200 ? 'ok' : (answer.body as { code: string }).code);
    }
    expect(codes).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited', 'key_temporarily_banned']);
    // At once, on both workers (well within the key cache time, so the stored ban is not what they see).
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(server, key, { path: '/v1/pets/1' })));
    expect(answers.map((answer) => (answer.body as { code?: string }).code)).toEqual(Array(8).fill('key_temporarily_banned'));
    await waitFor(() => servingPids(server, '/v1/pets/1').size === WORKERS, 'refusals from every worker', server);
    // The other worker saw the relayed ban: it refused as banned, and did not ban the key a second time.
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Connection: 'close' } })).text();
    expect(metrics).toMatch(/^pas_rate_limit_bans_total\{plan="enterprise",window="minute"\} 1$/m);
    expect(metrics).toMatch(/^pas_rate_limit_refusals_total\{plan="enterprise",window="ban"\} 9$/m);
  } finally {
    expect(await server.stop('SIGTERM')).toBe(0);
  }
});

it('SIGTERM while a replacement worker is still starting stops with exit 0', async () => {
  const { env } = database();
  const server = await startWorkers(env);
  const workerLine = /"pid":(\d+)[^\n]*"msg":"worker 1 listening/;
  await waitFor(() => workerLine.test(server.output()), "worker 1's start line", server);
  process.kill(Number(workerLine.exec(server.output())![1]), 'SIGKILL');
  await waitFor(() => /"msg":"worker died: replaced"/.test(server.output()), 'the replacement', server);
  // The replacement is still loading its modules: it has no SIGTERM handler yet.
  expect(await server.stop('SIGTERM')).toBe(0);
  expect(server.output()).not.toMatch(/"msg":"worker 3 listening/);
});

it('a worker killed under load is replaced and no acknowledged create is lost', async () => {
  const { env, file } = database();
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'], env).stdout.trim();
  const server = await startWorkers(env);
  const workerLine = /"pid":(\d+)[^\n]*"msg":"worker 1 listening/;
  await waitFor(() => workerLine.test(server.output()), "worker 1's start line", server);
  const victim = Number(workerLine.exec(server.output())![1]);

  const acknowledged: number[] = [];
  const breaches: unknown[] = [];
  let cutOff = 0;
  let done = false;
  const creator = async (): Promise<void> => {
    while (!done && breaches.length === 0) {
      try {
        const res = await send(server, key, { method: 'POST', body: { name: 'burst', categoryId: 1 } });
        if (res.status === 201) acknowledged.push((res.body as { id: number }).id);
        else breaches.push(`${res.status} ${JSON.stringify(res.body)}`);
      } catch (error) {
        // The connection died with the worker, or was never answered: not acknowledged.
        if ((error as Error).name === 'TypeError' || (error as Error).name === 'TimeoutError') cutOff++;
        else breaches.push(error);
      }
    }
  };
  const creators = Array.from({ length: 8 }, creator);
  try {
    await waitFor(() => acknowledged.length >= 150 || breaches.length > 0, '150 creates', server);
    process.kill(victim, 'SIGKILL');
    await waitFor(() => /"msg":"worker died: replaced"/.test(server.output()), 'the replacement', server);
    const before = acknowledged.length;
    await waitFor(() => acknowledged.length >= before + 150 || breaches.length > 0, '150 more creates after the kill', server);
  } finally {
    done = true;
    await Promise.all(creators);
    expect(await server.stop('SIGTERM')).toBe(0);
  }
  expect(breaches.map(String)).toEqual([]);
  expect(server.output()).toMatch(new RegExp(`"workerPid":${victim}[^\\n]*"signal":"SIGKILL"[^\\n]*"msg":"worker died: replaced"`));

  const db = new BetterSqlite3(file, { readonly: true });
  const stored = new Set(
    db
      .prepare('select id from pets')
      .all()
      .map((row) => (row as { id: number }).id),
  );
  db.close();
  const lost = acknowledged.filter((id) => !stored.has(id));
  console.log(`workers: ${acknowledged.length} creates acknowledged, ${cutOff} cut off by the kill, lost: ${lost.length}`);
  expect(lost).toEqual([]);
}, 90_000);

it.each([['0'], ['-1'], ['two'], ['257'], ['1.5']])('WORKERS=%s is refused at start', (value) => {
  const result = runServerToExit({ ...database().env, WORKERS: value, PORT: '0' });
  expect(result.status).toBe(1);
  expect(result.output).toMatch(/WORKERS: must be/);
});
