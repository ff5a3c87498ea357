import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT, tempDir } from './support/paths';
import { runKeysCli } from './support/processes';
import { checkedFetch } from './support/http';

/**
 * The access log is written asynchronously through a buffer
 * (src/observability/logger.ts); no answered request loses its line when the
 * process stops on SIGTERM or on an uncaught exception.
 */

const TSX = ['--import', pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href];
const REQUESTS = 300;

async function serveThenStop(script: string, signal: NodeJS.Signals): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; output: string }> {
  const env = { DATABASE_URL: `sqlite:${path.join(tempDir(), 'pets.db')}` };
  const key = runKeysCli(['create', '--plan', 'enterprise', '--rpm', '1000000', '--rpd', '100000000'], env).stdout.trim();
  const { DATABASE_URL: _d, REDIS_URL: _r, LOG_LEVEL: _l, ...inherited } = process.env;
  const child = spawn(process.execPath, [...TSX, script], {
    cwd: PROJECT_ROOT,
    env: { ...inherited, ...env, NODE_ENV: 'production', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 20_000;
  let port: number | undefined;
  while (port === undefined) {
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

it('an uncaught exception: logged as fatal after every access line, exit 1', async () => {
  const { code, lines, output } = await serveThenStop(path.join(__dirname, 'support', 'fatal-on-signal.ts'), 'SIGUSR2');
  expect(code).toBe(1);
  expect(accessLines(lines)).toHaveLength(REQUESTS);
  const fatal = lines.find((line) => line['level'] === 60);
  expect(fatal?.['msg']).toBe('uncaught exception: exiting');
  expect(output).toContain('planted failure (SIGUSR2)');
});
