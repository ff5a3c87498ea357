/**
 * npm run soak [-- --duration 600 --rate max --concurrency 8 --check-every 10]
 *
 * Builds the project and runs the real server (dist/src/server.js, production
 * mode, as `npm start` runs it: the access log on, appended to a file; a
 * METRICS_TOKEN so its heap can be read) under mixed load for `--duration`
 * seconds (default 10 minutes): list, create, get, invalid requests
 * (400/401/404), a Free key sent past its limit (429, then
 * key_temporarily_banned), and adoption (v2): orders placed, read, cancelled
 * by their customer and completed by staff, under If-Match. After the run the
 * adoption invariant is checked over the whole database (as
 * `npm run check:adoption` does): every pet agrees with its orders. `--rate max` (the default) is saturation: every
 * connection sends its next request as soon as the last is answered; a number
 * paces them. Every `--check-every`-th response is checked against the
 * contract. Reports the server's RSS (peak and per interval), its V8 heap
 * every second (the lowest reading of an interval is the heap after its
 * garbage collections: flat when nothing grows), the 5xx count, p50 / p99
 * latency per interval, and the invariant's violations, in
 * bench/results/soak.{json,md}. Exits 1 on any 5xx, contract failure,
 * transport error, invariant violation or a server that died.
 *
 * DATABASE_URL / REDIS_URL from the environment are used when set (each run
 * in a fresh PostgreSQL schema and Redis prefix); otherwise a temp SQLite file.
 */
import http from 'node:http';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { BENCH_METRICS_TOKEN, PeakRss, ROOT, ServerProcess, killAllServers, rssMb, runCommand, scrapeMetrics, sleep, SERVER_NODE_FLAGS } from './lib';
import { openStorage } from '../src/service/storage';
import { issueApiKey } from '../src/service/keys';
import { assertResponseConforms } from '../test/support/spec-conformance';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '600' },
    rate: { type: 'string', default: 'max' },
    concurrency: { type: 'string', default: '8' },
    'check-every': { type: 'string', default: '10' },
    interval: { type: 'string', default: '60' },
  },
});
const positive = (name: keyof typeof options): number => {
  const value = Number(options[name]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${options[name]}`);
  return value;
};
const DURATION_S = positive('duration');
/** Requests per second over all connections, or undefined: as fast as the server answers. */
const RATE = options.rate === 'max' ? undefined : positive('rate');
const CONCURRENCY = Math.round(positive('concurrency'));
const CHECK_EVERY = Math.round(positive('check-every'));
const INTERVAL_S = positive('interval');

interface Observed {
  method: string;
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
}

/** Where the server keeps its data: the environment's PostgreSQL (+ Redis), isolated, or a temp SQLite file. */
function databaseEnv(): Record<string, string> {
  const name = `soak_${randomBytes(4).toString('hex')}`;
  const database = process.env['DATABASE_URL'];
  if (database?.startsWith('postgres')) {
    const url = new URL(database);
    url.searchParams.set('schema', name);
    const redis = process.env['REDIS_URL'];
    return { DATABASE_URL: url.toString(), ...(redis ? { REDIS_URL: redis, REDIS_KEY_PREFIX: `pas:${name}:` } : {}) };
  }
  return { DATABASE_URL: `sqlite:${path.join(mkdtempSync(path.join(os.tmpdir(), 'soak-')), 'pets.db')}` };
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  console.log(
    `soak: ${DURATION_S} s at ${RATE === undefined ? 'saturation' : `${RATE} req/s`} over ${CONCURRENCY} connections; contract check on 1 response in ${CHECK_EVERY}`,
  );
  await runCommand('npm', ['run', 'build'], { timeoutMs: 300_000 });
  const env = databaseEnv();
  const storage = await openStorage(env['DATABASE_URL']!);
  const enterpriseKey = (await issueApiKey(storage.apiKeys, { plan: 'enterprise', requestsPerMinute: 1_000_000, requestsPerDay: 100_000_000, label: 'soak' }))
    .key;
  const free = (await issueApiKey(storage.apiKeys, { plan: 'free', label: 'soak free' })).key;
  const staffKey = (
    await issueApiKey(storage.apiKeys, { plan: 'enterprise', role: 'staff', requestsPerMinute: 1_000_000, requestsPerDay: 100_000_000, label: 'soak staff' })
  ).key;
  await storage.close();

  // As `npm start` runs in production: NODE_ENV=production and nothing else, the log appended to a file.
  const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'soak-log-')), 'server.log');
  const serverEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['LOG_LEVEL', 'LOG_FORMAT', 'VALIDATE_RESPONSES', 'WORKERS', 'NODE_OPTIONS']) delete serverEnv[name];
  const server = await ServerProcess.start({
    id: 'soak',
    label: 'server (production)',
    args: [...SERVER_NODE_FLAGS, 'dist/src/server.js'],
    env: { ...serverEnv, ...env, NODE_ENV: 'production', METRICS_TOKEN: BENCH_METRICS_TOKEN },
    stdout: { file: logFile },
  });
  /** The server's V8 heap in use, in MB, from its /metrics (prom-client's nodejs_heap_size_used_bytes). */
  const heapUsedMb = async (): Promise<number | undefined> => {
    const bytes = (await scrapeMetrics(server))?.('nodejs_heap_size_used_bytes');
    return bytes !== undefined && Number.isFinite(bytes) ? bytes / 2 ** 20 : undefined;
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const send = (
    method: string,
    url: string,
    key: string | undefined,
    body?: string,
    contentType = 'application/json',
    extra: Record<string, string> = {},
  ): Promise<Observed> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const headers: Record<string, string | number> = { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...extra };
      if (body !== undefined) Object.assign(headers, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
      const req = http.request(`${server.baseUrl}${url}`, { method, agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ method, url, status: res.statusCode!, headers: res.headers, text, ms: performance.now() - started }));
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${url}: no answer within 10 s`)));
      req.on('error', reject);
      req.end(body);
    });

  const ids: number[] = [];
  /** Orders placed and not yet closed by the soak: each is closed by one request at most (so a 409 or 412 there is a fault). */
  const placed: number[] = [];
  const orders: number[] = [];
  const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;
  const take = (items: number[]): number | undefined => (items.length ? items.splice(Math.floor(Math.random() * items.length), 1)[0] : undefined);
  /** Adoption (v2): place an order for a pet (available or not: 201 or 409), read one, cancel one (its customer) or complete one (staff), under If-Match. */
  const adoption = (roll: number): Promise<Observed> => {
    const close = roll < 3 ? 'cancelled' : roll < 5 ? 'completed' : undefined;
    const orderId = close ? take(placed) : undefined;
    if (close && orderId !== undefined) {
      const key = close === 'completed' ? staffKey : enterpriseKey;
      return send('PATCH', `/v2/store/orders/${orderId}`, key, JSON.stringify({ status: close }), 'application/json', { 'If-Match': '"1"' });
    }
    if (roll < 7 && orders.length) return send('GET', `/v2/store/orders/${pick(orders)}`, enterpriseKey);
    return send('POST', '/v2/store/orders', enterpriseKey, JSON.stringify({ petId: ids.length ? pick(ids) : 1 }));
  };
  /** One request of the mix: weights 30 list, 15 get, 15 create, 12 invalid, 8 free key (429s), 20 adoption. */
  const nextRequest = (): Promise<Observed> => {
    const roll = Math.random() * 100;
    if (roll >= 80) return adoption(roll - 80 < 20 ? ((roll - 80) * 10) / 20 : 0);
    if (roll < 30)
      return send(
        'GET',
        `/v1/pets?limit=${1 + Math.floor(Math.random() * 100)}${Math.random() < 0.3 ? `&status=${pick(['available', 'pending', 'sold'])}` : ''}`,
        enterpriseKey,
      );
    if (roll < 45)
      return send('GET', `/v1/pets/${ids.length && Math.random() < 0.9 ? pick(ids) : 9_000_000 + Math.floor(Math.random() * 1000)}`, enterpriseKey);
    if (roll < 60)
      return send(
        'POST',
        Math.random() < 0.5 ? '/v1/pets' : '/v2/pets',
        enterpriseKey,
        JSON.stringify({
          name: `soak-${randomBytes(3).toString('hex')}`,
          categoryId: 1 + Math.floor(Math.random() * 5),
          status: pick(['available', 'pending', 'sold']),
        }),
      );
    if (roll < 72) {
      return pick([
        () => send('GET', '/v1/pets?limit=0', enterpriseKey),
        () => send('GET', '/v1/pets?limit=1&limit=2', enterpriseKey),
        () => send('GET', '/v1/pets?colour=red', enterpriseKey),
        () => send('GET', '/v1/pets/abc', enterpriseKey),
        () => send('GET', '/v1/pets/%FF', enterpriseKey),
        () => send('POST', '/v1/pets', enterpriseKey, '{"name":'),
        () => send('POST', '/v1/pets', enterpriseKey, JSON.stringify({ name: 'x', categoryId: 1, id: 5 })),
        () => send('POST', '/v1/pets', enterpriseKey, 'name=x', 'text/plain'),
        () => send('DELETE', '/v1/pets', enterpriseKey),
        () => send('GET', '/v1/pets', `pas_${randomBytes(32).toString('base64url')}`),
        () => send('GET', '/v1/nowhere', enterpriseKey),
      ])();
    }
    return send('GET', '/v1/pets?limit=5', free);
  };

  interface Bucket {
    latencies: number[];
    statuses: Record<string, number>;
    rssMb: number;
    heapMinMb: number;
    heapMaxMb: number;
  }
  const buckets: Bucket[] = [];
  const bucketAt = (elapsedMs: number): Bucket => {
    // Answers that land after the end belong to the last interval.
    const index = Math.floor(Math.min(elapsedMs, DURATION_S * 1000 - 1) / (INTERVAL_S * 1000));
    while (buckets.length <= index) buckets.push({ latencies: [], statuses: {}, rssMb: 0, heapMinMb: Infinity, heapMaxMb: 0 });
    return buckets[index]!;
  };
  let total = 0;
  let serverErrors = 0;
  let contractFailureCount = 0;
  /** The first 20, for the report. */
  const contractFailures: string[] = [];
  const transportErrors: string[] = [];
  const adoptionFaults: string[] = [];

  await sleep(1_000); // settle after start
  const rssStart = rssMb(server.pid)!;
  const peak = new PeakRss(server.pid);
  const started = Date.now();
  const endAt = started + DURATION_S * 1000;
  const memoryTimer = setInterval(() => {
    const bucket = bucketAt(Date.now() - started);
    bucket.rssMb = Math.max(bucket.rssMb, rssMb(server.pid) ?? 0);
    void heapUsedMb().then((heap) => {
      if (heap === undefined) return;
      bucket.heapMinMb = Math.min(bucket.heapMinMb, heap);
      bucket.heapMaxMb = Math.max(bucket.heapMaxMb, heap);
    });
  }, 1_000);
  // Paced: each connection sends at RATE / CONCURRENCY per second, on a fixed schedule (no catch-up bursts).
  const slotMs = RATE === undefined ? 0 : (CONCURRENCY / RATE) * 1000;
  const worker = async (offset: number): Promise<void> => {
    let nextAt = started + offset;
    while (Date.now() < endAt) {
      if (slotMs > 0) {
        await sleep(Math.max(0, nextAt - Date.now()));
        nextAt = Math.max(nextAt + slotMs, Date.now());
      }
      try {
        const observed = await nextRequest();
        const bucket = bucketAt(Date.now() - started);
        bucket.latencies.push(observed.ms);
        bucket.statuses[observed.status] = (bucket.statuses[observed.status] ?? 0) + 1;
        total += 1;
        if (observed.status >= 500) serverErrors += 1;
        if (observed.method === 'POST' && observed.status === 201) {
          const { id } = JSON.parse(observed.text) as { id: number };
          if (observed.url === '/v2/store/orders') {
            placed.push(id);
            orders.push(id);
          } else ids.push(id);
        }
        // An order only the soak closes, once, with its current tag: anything but 200 is a fault.
        if (observed.method === 'PATCH' && observed.status !== 200) adoptionFaults.push(`${observed.url} -> ${observed.status} ${observed.text.slice(0, 200)}`);
        if (total % CHECK_EVERY === 0 || observed.status >= 500) {
          try {
            let body: unknown;
            try {
              body = observed.text ? JSON.parse(observed.text) : undefined;
            } catch {
              body = undefined;
            }
            assertResponseConforms({ ...observed, url: observed.url.split('?')[0]!, body });
          } catch (error) {
            contractFailureCount += 1;
            if (contractFailures.length < 20) contractFailures.push((error as Error).message);
          }
        }
      } catch (error) {
        if (transportErrors.length < 20) transportErrors.push((error as Error).message);
      }
    }
  };
  const progress = setInterval(() => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    console.log(`  ${elapsed} s: ${total} responses, ${serverErrors} 5xx, RSS ${rssMb(server.pid)?.toFixed(1)} MB`);
  }, 30_000);
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => worker((i * slotMs) / CONCURRENCY)));
  clearInterval(progress);
  clearInterval(memoryTimer);
  const rssEnd = rssMb(server.pid)!;
  const rssPeak = peak.stop();
  agent.destroy();
  server.assertAlive();
  await server.stop();
  // Every answered request has its access line, including those answered just before SIGTERM.
  // Read line by line: at saturation the log outgrows what one string can hold.
  let accessLines = 0;
  for await (const line of createInterface({ input: createReadStream(logFile), crlfDelay: Infinity })) {
    if (line.includes('"msg":"request"') && !line.includes('"path":"/healthz"')) accessLines += 1;
  }
  rmSync(path.dirname(logFile), { recursive: true, force: true });
  // The invariant over the whole database the server left (what `npm run check:adoption` checks).
  const checked = await openStorage(env['DATABASE_URL']!);
  const adoptionViolations = await checked.adoptionViolations();
  const ordersByStatus = await Promise.all(
    (['placed', 'completed', 'cancelled'] as const).map(async (status) => [
      status,
      (await checked.orders.list({ owner: undefined, status, limit: 1_000_000 })).length,
    ]),
  );
  await checked.close();

  const intervals = buckets.map((bucket, index) => {
    const sorted = [...bucket.latencies].sort((a, b) => a - b);
    return {
      fromSecond: index * INTERVAL_S,
      requests: sorted.length,
      p50Ms: Number(percentile(sorted, 50).toFixed(1)),
      p99Ms: Number(percentile(sorted, 99).toFixed(1)),
      maxMs: Number((sorted.at(-1) ?? 0).toFixed(1)),
      statuses: bucket.statuses,
      rssMb: Number(bucket.rssMb.toFixed(1)),
      heapAfterGcMb: Number.isFinite(bucket.heapMinMb) ? Number(bucket.heapMinMb.toFixed(1)) : undefined,
      heapMaxMb: bucket.heapMaxMb > 0 ? Number(bucket.heapMaxMb.toFixed(1)) : undefined,
    };
  });
  // From the second interval (minute 2) on: how far the heap after GC moved.
  const settled = intervals
    .slice(1)
    .map((row) => row.heapAfterGcMb)
    .filter((value): value is number => value !== undefined);
  const heapDriftMb = settled.length ? Number((Math.max(...settled) - Math.min(...settled)).toFixed(1)) : undefined;
  const result = {
    date: new Date().toISOString(),
    settings: {
      durationSeconds: DURATION_S,
      rate: RATE ?? 'saturation',
      concurrency: CONCURRENCY,
      checkEvery: CHECK_EVERY,
      backend: env['REDIS_URL'] ? 'postgres+redis' : env['DATABASE_URL']!.split(':')[0],
    },
    requests: total,
    serverErrors,
    contractChecks: Math.floor(total / CHECK_EVERY),
    contractFailureCount,
    contractFailures,
    transportErrors,
    rssMb: { start: Number(rssStart.toFixed(1)), end: Number(rssEnd.toFixed(1)), peak: rssPeak === undefined ? undefined : Number(rssPeak.toFixed(1)) },
    heapDriftMb,
    accessLines,
    adoption: {
      orders: Object.fromEntries(ordersByStatus),
      faults: adoptionFaults.slice(0, 20),
      faultCount: adoptionFaults.length,
      invariantViolations: adoptionViolations.slice(0, 20),
      invariantViolationCount: adoptionViolations.length,
    },
    intervals,
  };
  writeFileSync(path.join(ROOT, 'bench/results/soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(ROOT, 'bench/results/soak.md'), renderMarkdown(result));
  console.log(renderMarkdown(result));
  const failed =
    serverErrors > 0 ||
    contractFailureCount > 0 ||
    transportErrors.length > 0 ||
    accessLines < total ||
    adoptionViolations.length > 0 ||
    adoptionFaults.length > 0;
  process.exitCode = failed ? 1 : 0;
}

function renderMarkdown(result: {
  date: string;
  settings: Record<string, unknown>;
  requests: number;
  serverErrors: number;
  contractChecks: number;
  contractFailureCount: number;
  contractFailures: string[];
  transportErrors: string[];
  rssMb: { start: number; end: number; peak: number | undefined };
  heapDriftMb: number | undefined;
  accessLines: number;
  adoption: { orders: Record<string, unknown>; faults: string[]; faultCount: number; invariantViolations: string[]; invariantViolationCount: number };
  intervals: {
    fromSecond: number;
    requests: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    statuses: Record<string, number>;
    rssMb: number;
    heapAfterGcMb: number | undefined;
    heapMaxMb: number | undefined;
  }[];
}): string {
  const lines = [
    `# Soak run (${result.date})`,
    '',
    `Settings: ${Object.entries(result.settings)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ')}.`,
    '',
    `- requests: ${result.requests}; 5xx: **${result.serverErrors}**; transport errors: ${result.transportErrors.length}`,
    `- contract checks: ${result.contractChecks}, failures: **${result.contractFailureCount}**`,
    `- server RSS: ${result.rssMb.start} MB at start, ${result.rssMb.end} MB at the end, peak ${result.rssMb.peak ?? 'n/a'} MB (VmHWM over the run; target ≤ 150 MB)`,
    `- heap after GC (the lowest of the interval's 1 s readings), from the second interval to the last: moved ${result.heapDriftMb ?? 'n/a'} MB (flat: within a few MB)`,
    `- access-log lines after SIGTERM: ${result.accessLines} for ${result.requests} responses${result.accessLines < result.requests ? ' (**lines lost**)' : ''}`,
    `- adoption: orders ${Object.entries(result.adoption.orders)
      .map(([status, count]) => `${status} ${count}`)
      .join(
        ', ',
      )}; closing an order under If-Match refused: **${result.adoption.faultCount}**; adoption invariant over the database: **${result.adoption.invariantViolationCount}** violation(s)`,
    '',
    '| from (s) | requests | p50 ms | p99 ms | max ms | RSS MB (max) | heap after GC MB | heap max MB | statuses |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...result.intervals.map(
      (row) =>
        `| ${row.fromSecond} | ${row.requests} | ${row.p50Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.rssMb} | ${row.heapAfterGcMb ?? ''} | ${row.heapMaxMb ?? ''} | ${Object.entries(
          row.statuses,
        )
          .map(([status, count]) => `${status}: ${count}`)
          .join(', ')} |`,
    ),
    ...(result.contractFailures.length ? ['', '## Contract failures', '', ...result.contractFailures.map((failure) => `- ${failure.split('\n')[0]}`)] : []),
    ...(result.transportErrors.length ? ['', '## Transport errors', '', ...result.transportErrors.map((error) => `- ${error}`)] : []),
    ...(result.adoption.faults.length ? ['', '## Adoption faults', '', ...result.adoption.faults.map((fault) => `- ${fault}`)] : []),
    ...(result.adoption.invariantViolations.length
      ? ['', '## Adoption invariant violations', '', ...result.adoption.invariantViolations.map((v) => `- ${v}`)]
      : []),
  ];
  return `${lines.join('\n')}\n`;
}

process.on('SIGINT', () => {
  killAllServers();
  process.exit(130);
});
main().catch((error: unknown) => {
  killAllServers();
  console.error(error);
  process.exit(1);
});
