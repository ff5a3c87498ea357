import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT, tempDir } from './support/paths';
import { runKeysCli } from './support/processes';
import { checkedFetch } from './support/http';
import { bufferedDestination } from '../src/observability';

/**
 * The access log is written asynchronously through a buffer
 * (src/observability/logger.ts), whether stdout is a pipe or a regular file;
 * no answered request loses its line when the process stops on SIGTERM or on
 * an uncaught exception.
 */

const TSX = ['--import', pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href];
const REQUESTS = 300;

async function serveThenStop(
  script: string,
  signal: NodeJS.Signals,
  stdout: 'pipe' | 'file' = 'pipe',
): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; output: string }> {
  const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` };
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'], env).stdout.trim();
  const { DATABASE_URL: _d, REDIS_URL: _r, LOG_LEVEL: _l, ...inherited } = process.env;
  const stdoutFile = path.join(tempDir(), 'stdout.log');
  const fd = stdout === 'file' ? openSync(stdoutFile, 'w') : undefined;
  const child = spawn(process.execPath, [...TSX, script], {
    cwd: PROJECT_ROOT,
    env: { ...inherited, ...env, NODE_ENV: 'production', PORT: '0' },
    stdio: ['ignore', fd ?? 'pipe', 'pipe'],
  });
  if (fd !== undefined) closeSync(fd);
  let piped = '';
  child.stdout?.on('data', (chunk) => (piped += chunk));
  child.stderr!.on('data', (chunk) => (piped += chunk));
  const outputNow = (): string => (stdout === 'file' ? readFileSync(stdoutFile, 'utf8') : '') + piped;
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 20_000;
  let port: number | undefined;
  while (port === undefined) {
    output = outputNow();
    port = Number(/"port":(\d+)/.exec(output)?.[1]) || undefined;
    if (Date.now() > deadline) throw new Error(`no start line:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let sent = 0; sent < REQUESTS; sent += 30) {
    const batch = Array.from({ length: Math.min(30, REQUESTS - sent) }, () =>
      checkedFetch(`http://127.0.0.1:${port}/v1/pets?limit=5`, { headers: { Authorization: `Bearer ${key}` } }).then((res) => expect(res.status).toBe(200)),
    );
    await Promise.all(batch);
  }
  // At once after the last answer: its line may still be in the buffer.
  child.kill(signal);
  const code = await exited;
  output = outputNow();
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, lines, output };
}

const accessLines = (lines: Array<Record<string, unknown>>) => lines.filter((line) => line['msg'] === 'request' && line['path'] === '/v1/pets');

it('SIGTERM right after a burst: every answered request has its access line', async () => {
  const { code, lines } = await serveThenStop(path.join(PROJECT_ROOT, 'src/server.ts'), 'SIGTERM');
  expect(code).toBe(0);
  expect(accessLines(lines)).toHaveLength(REQUESTS);
  expect(lines.at(-1)?.['msg']).toBe('stopped');
});

it('SIGTERM right after a burst, stdout a regular file: every answered request has its access line', async () => {
  const { code, lines } = await serveThenStop(path.join(PROJECT_ROOT, 'src/server.ts'), 'SIGTERM', 'file');
  expect(code).toBe(0);
  expect(accessLines(lines)).toHaveLength(REQUESTS);
  expect(lines.at(-1)?.['msg']).toBe('stopped');
});

it('an uncaught exception: logged as fatal after every access line, exit 1', async () => {
  const { code, lines, output } = await serveThenStop(path.join(__dirname, 'support', 'fatal-on-signal.ts'), 'SIGUSR2');
  expect(code).toBe(1);
  expect(accessLines(lines)).toHaveLength(REQUESTS);
  const fatal = lines.find((line) => line['level'] === 60);
  expect(fatal?.['msg']).toBe('uncaught exception: exiting');
  expect(output).toContain('planted failure (SIGUSR2)');
});

describe('the buffered writer keeps up with a busy server', () => {
  // One turn of a busy loop answers every ready connection: a burst of lines
  // must leave in a few writes (one completes per turn), or the backlog grows
  // for as long as the load lasts.
  const LINE = `${JSON.stringify({ level: 30, requestId: 'b3c1e1a2-1111-2222-3333-444455556666', path: '/v1/pets', status: 200, pad: 'x'.repeat(200) })}\n`;
  const BURST = 3_000;

  /** Writes `lines` lines in one burst, or one per turn of the event loop (`turnApart`), and reads them back. */
  async function writesFor(sharedPipe: boolean, { lines = BURST, turnApart = false } = {}): Promise<{ writes: number[]; text: string }> {
    const file = path.join(tempDir(), 'burst.log');
    const destination = bufferedDestination(file, { sharedPipe });
    await new Promise((resolve) => destination.once('ready', resolve));
    const writes: number[] = [];
    destination.on('write', (bytes: number) => writes.push(bytes));
    for (let i = 0; i < lines; i++) {
      destination.write(LINE);
      if (turnApart) await new Promise((resolve) => setImmediate(resolve));
    }
    // Ended and closed before the file is read: a flush's callback can come while lines below the batch size still wait.
    const closed = new Promise((resolve) => destination.once('close', resolve));
    destination.end();
    await closed;
    return { writes, text: readFileSync(file, 'utf8') };
  }

  it('writes a burst of access lines in large writes of whole lines', async () => {
    const { writes, text } = await writesFor(false);
    expect(text).toBe(LINE.repeat(BURST));
    // 3,000 lines of about 300 bytes: under 20 writes (4 KB writes would take over 200).
    expect(writes.length).toBeLessThan(20);
  });

  it('gathers lines logged a turn apart into writes of at least 16 KiB', async () => {
    // Each write is a round trip through libuv's pool: one per 16 KiB of lines, not one per few lines.
    const { writes, text } = await writesFor(false, { lines: 600, turnApart: true });
    expect(text).toBe(LINE.repeat(600));
    // The last write is the flush of what was left.
    expect(Math.min(...writes.slice(0, -1))).toBeGreaterThanOrEqual(16_384);
  });

  it('keeps each write to one atomic pipe write (4,096 bytes) when workers share a pipe', async () => {
    const { writes, text } = await writesFor(true);
    expect(text).toBe(LINE.repeat(BURST));
    expect(Math.max(...writes)).toBeLessThanOrEqual(4_096);
  });
});
