import http from 'node:http';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { runKeysCli, runServerToExit, startServer } from './support/processes';
import { tempDir } from './support/paths';
import { checkObservedResponse, checkedFetch } from './support/http';

const KEY = /pas_[A-Za-z0-9_-]{43}/;

async function get(url: string, key?: string): Promise<{ status: number; body: string }> {
  const res = await checkedFetch(url, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: res.text };
}

describe('server entry point (src/server.ts)', () => {
  it('first start in development creates data/pets.db under the working directory and prints one usable key', async () => {
    const cwd = tempDir();
    const server = await startServer({ CWD: cwd, DATABASE_URL: '' });
    try {
      expect(existsSync(path.join(cwd, 'data', 'pets.db'))).toBe(true);
      const key = KEY.exec(server.output())?.[0];
      expect(key).toBeDefined();
      expect((await get(`${server.url}/v1/pets`, key)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // A second start finds the key and prints none.
    const again = await startServer({ CWD: cwd, DATABASE_URL: '' });
    expect(again.output()).not.toMatch(KEY);
    expect(await again.stop()).toBe(0);
  });

  it('never creates a key in production', async () => {
    const server = await startServer({ NODE_ENV: 'production', DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
    expect(server.output()).not.toMatch(KEY);
    expect((await get(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT: must be an integer from 0 to 65535/],
    [{ PORT: '70000' }, /PORT: must be an integer from 0 to 65535/],
    [{ NODE_ENV: 'staging' }, /NODE_ENV/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ VALIDATE_RESPONSES: 'maybe' }, /VALIDATE_RESPONSES: must be true, false or a fraction from 0 to 1/],
    [{ VALIDATE_RESPONSES: '2' }, /VALIDATE_RESPONSES: must be true, false or a fraction from 0 to 1/],
    [{ VALIDATE_RESPONSES: '-0.1' }, /VALIDATE_RESPONSES: must be true, false or a fraction from 0 to 1/],
    [{ VALIDATE_RESPONSES: '50%' }, /VALIDATE_RESPONSES: must be true, false or a fraction from 0 to 1/],
    [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN: must be at least 16 characters/],
    [{ METRICS_TOKEN: 'sixteen chars and a space' }, /METRICS_TOKEN: must be printable ASCII without spaces/],
    [{ LOG_FORMAT: 'xml' }, /LOG_FORMAT/],
  ])('refuses to start on bad configuration %j with a clear message and exit 1', (env, message) => {
    const result = runServerToExit(env as Record<string, string>);
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/invalid configuration/);
    expect(result.output).toMatch(message);
    expect(result.output).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('on SIGTERM finishes the in-flight request (closing its keep-alive connection), closes the database and exits 0', async () => {
    const databaseUrl = `sqlite:${tempDir()}/pets.db`;
    const key = runKeysCli(['create', '--plan', 'free'], { DATABASE_URL: databaseUrl }).stdout.trim();
    const server = await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' });
    const agent = new http.Agent({ keepAlive: true });
    const body = JSON.stringify({ name: 'Slow', categoryId: 1 });
    // node:http, not fetch: the body is sent in two parts, around the signal. The answer is checked against the contract all the same.
    // Send the headers and, once the server has them (its 100 Continue), half the body; signal; once
    // the server says it is shutting down, the rest. Each step waits for the server, not for a guessed delay.
    const shuttingDown = async (): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (!server.output().includes('shutting down')) {
        if (Date.now() > deadline || server.child.exitCode !== null) throw new Error(`the server never said it was shutting down:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const response = new Promise<{ status: number; text: string; connection?: string }>((resolve, reject) => {
      const req = http.request(
        `${server.url}/v1/pets`,
        {
          method: 'POST',
          agent,
          headers: {
            Authorization: `Bearer ${key}`,
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            Expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => {
            try {
              checkObservedResponse({ method: 'POST', url: '/v1/pets', status: res.statusCode!, headers: res.headers, text });
              resolve({ status: res.statusCode!, text, connection: res.headers.connection });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.slice(0, 10));
        server.child.kill('SIGTERM');
        shuttingDown().then(() => req.end(body.slice(10)), reject);
      });
      req.flushHeaders();
    });
    const { status, text, connection } = await response;
    const answeredAt = Date.now();
    expect(status).toBe(201);
    expect(JSON.parse(text)).toMatchObject({ name: 'Slow' });
    expect(connection).toBe('close'); // the keep-alive socket does not hold the shutdown open
    // A repeated SIGTERM (as some supervisors send) does not cut the shutdown short.
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(Date.now() - answeredAt).toBeLessThan(5_000); // well before the 10 s shutdown timeout
    expect(server.output()).toContain('stopped');
    agent.destroy();
    // The acknowledged pet is on disk.
    const again = await startServer({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' });
    expect(JSON.parse((await get(`${again.url}/v1/pets`, key)).body)).toEqual([JSON.parse(text)]);
    expect(await again.stop('SIGINT')).toBe(0);
  });
});
