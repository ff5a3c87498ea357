// The open-loop load generator (bench/open-loop.ts starts it): requests sent
// on a fixed schedule over a pool of keep-alive connections, each timed from
// when it was due. It runs in a process of its own, on plain sockets with a
// request prepared once and a latency array allocated once, so its own
// pauses (garbage collection, compilation) stay far below what it measures:
// the bench process, with its results and its TypeScript loader, paused long
// enough to show in a p99.
//
//   node bench/open-loop-client.mjs '{"host":"127.0.0.1","port":3000,"method":"GET","path":"/v1/pets?limit=20",
//     "headers":{"authorization":"Bearer k"},"rate":2800,"seconds":10,"warmupSeconds":2,"connections":32,"status":200}'
//
// After the warm-up it prints `warm`; then each `go` line on stdin measures
// one window of `seconds` and prints its JSON line (the bench resets the
// server's counters before each); the end of stdin ends it.
import net from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import readline from 'node:readline';

const options = JSON.parse(process.argv[2]);
const { host, port, method, path, rate, seconds, warmupSeconds, connections, status } = options;
const body = options.body === undefined ? undefined : Buffer.from(options.body);
const request = Buffer.concat([
  Buffer.from(
    `${method} ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n` +
      Object.entries(options.headers ?? {})
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      (body ? `Content-Length: ${body.length}\r\n` : '') +
      '\r\n',
  ),
  ...(body ? [body] : []),
]);
const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/** One keep-alive connection: at most one request in flight (no pipelining). */
class Connection {
  constructor(pool) {
    this.pool = pool;
    this.dueAt = undefined;
    this.buffer = undefined;
    this.open();
  }

  open() {
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk) => this.read(chunk));
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      if (this.dueAt !== undefined) this.pool.settle(this, false);
      if (!this.pool.closing) this.open();
    });
  }

  send(dueAt) {
    this.dueAt = dueAt;
    this.buffer = undefined;
    this.socket.write(request);
  }

  /** Gathers one response: its head, then Content-Length bytes (or a chunked body up to its last chunk). */
  read(chunk) {
    // Bytes with no request in flight (a server refusing an idle connection) answer nothing of ours.
    if (this.dueAt === undefined) return;
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    const headEnd = this.buffer.indexOf(HEADER_END);
    if (headEnd === -1) return;
    const head = this.buffer.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    const bodyBytes = this.buffer.length - headEnd - HEADER_END.length;
    if (length ? bodyBytes < Number(length[1]) : !this.buffer.subarray(this.buffer.length - CHUNKED_END.length).equals(CHUNKED_END)) return;
    const ok = Number(head.slice(9, 12)) === status;
    this.buffer = undefined;
    if (/\r\nconnection:\s*close/i.test(head)) this.socket.destroy();
    this.pool.settle(this, ok);
  }
}

/** Sends what comes due, queues it when every connection is busy, and records each response time from its due time. */
class Pool {
  constructor() {
    this.idle = [];
    this.waiting = [];
    this.closing = false;
    this.connections = Array.from({ length: connections }, () => new Connection(this));
    this.idle.push(...this.connections);
    this.phase = undefined;
  }

  start(total, latencies, done) {
    this.phase = { total, latencies, done, sent: 0, settled: 0, answered: 0, failures: 0, started: performance.now() };
    const phase = this.phase;
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - phase.started) / 1000) * rate));
      while (phase.sent < due) this.dispatch(phase.started + (phase.sent++ * 1000) / rate);
      if (phase.sent === total) clearInterval(tick);
    }, 1);
  }

  dispatch(dueAt) {
    const connection = this.idle.pop();
    if (connection) connection.send(dueAt);
    else this.waiting.push(dueAt);
  }

  settle(connection, ok) {
    const phase = this.phase;
    const elapsed = performance.now() - connection.dueAt;
    connection.dueAt = undefined;
    if (ok) phase.latencies[phase.answered++] = elapsed;
    else phase.failures += 1;
    if (this.waiting.length > 0) connection.send(this.waiting.shift());
    else this.idle.push(connection);
    if (++phase.settled === phase.total) phase.done(phase);
  }

  close() {
    this.closing = true;
    for (const connection of this.connections) connection.socket.destroy();
  }
}

const run = (pool, phaseSeconds) =>
  new Promise((resolve) => {
    const total = Math.max(1, Math.round(rate * phaseSeconds));
    pool.start(total, new Float64Array(total), resolve);
  });

const pool = new Pool();
if (warmupSeconds > 0) await run(pool, warmupSeconds);
process.stdout.write('warm\n');
// Each `go` line measures one window; the end of stdin ends the run.
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line !== 'go') continue;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const measured = await run(pool, seconds);
  loop.disable();
  const sorted = measured.latencies.subarray(0, measured.answered).sort();
  const at = (q) => (measured.answered === 0 ? null : sorted[Math.min(measured.answered - 1, Math.ceil(q * measured.answered) - 1)]);
  process.stdout.write(
    `${JSON.stringify({
      answered: measured.answered,
      failures: measured.failures,
      seconds: (performance.now() - measured.started) / 1000,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      p999Ms: at(0.999),
      maxMs: at(1),
      generatorLoopDelay: { p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 },
    })}\n`,
  );
}
pool.close();
