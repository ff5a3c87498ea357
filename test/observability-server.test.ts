import { startServer } from './support/processes';
import { tempDir } from './support/paths';
import { loadConfig } from '../src/config';
import { checkedFetch } from './support/http';

const TOKEN = 'a-metrics-token-of-32-characters';

/** Log lines are written when the response closes, a moment after the client has it: wait (bounded) for them. */
async function waitForOutput(output: () => string, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  while (!pattern.test(output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return output();
}

describe('observability of the real entry point (src/server.ts)', () => {
  it('in production: /metrics is disabled (404) without METRICS_TOKEN; one JSON access line per request; X-Request-Id', async () => {
    const server = await startServer({ NODE_ENV: 'production', DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
    try {
      const metrics = await checkedFetch(`${server.url}/metrics`);
      expect(metrics.status).toBe(404);
      expect(metrics.body.code).toBe('not_found');
      const health = await checkedFetch(`${server.url}/healthz`, { headers: { 'X-Request-Id': 'prod-check-1' } });
      expect(health.headers['x-request-id']).toBe('prod-check-1');
      expect((await checkedFetch(`${server.url}/v1/pets`)).status).toBe(401);
      const access = (await waitForOutput(server.output, /"operation":"listPets"/))
        .split('\n')
        .filter((line) => line.includes('"msg":"request"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(access).toEqual([
        expect.objectContaining({ level: 30, path: '/metrics', operation: 'metrics', status: 404 }),
        expect.objectContaining({ requestId: 'prod-check-1', operation: 'healthz', status: 200 }),
        expect.objectContaining({ operation: 'listPets', status: 401, ip: '127.0.0.1' }),
      ]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('with METRICS_TOKEN (production): 401 without it, the Prometheus text with it', async () => {
    const server = await startServer({ NODE_ENV: 'production', METRICS_TOKEN: TOKEN, DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
    try {
      expect((await checkedFetch(`${server.url}/metrics`)).status).toBe(401);
      const res = await checkedFetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      const { text } = res;
      expect(text).toContain('# TYPE pas_http_request_duration_seconds histogram');
      expect(text).toContain('process_resident_memory_bytes');
      expect(server.output()).not.toContain(TOKEN);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('LOG_FORMAT=pretty prints lines for people, not JSON', async () => {
    const server = await startServer({ LOG_FORMAT: 'pretty', DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
    try {
      expect((await checkedFetch(`${server.url}/healthz`)).status).toBe(200);
      const output = await waitForOutput(server.output, /INFO.*request/);
      expect(output).toMatch(/INFO.*listening on http/);
      expect(output).toMatch(/INFO.*request/);
      expect(output).not.toMatch(/^\{"level"/m);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('metrics access from the configuration', () => {
  it('token when METRICS_TOKEN is set; else open in development and test, disabled in production', () => {
    expect(loadConfig({ METRICS_TOKEN: TOKEN, NODE_ENV: 'production' }).metricsAccess).toEqual({ token: TOKEN });
    expect(loadConfig({ METRICS_TOKEN: TOKEN }).metricsAccess).toEqual({ token: TOKEN });
    expect(loadConfig({ NODE_ENV: 'production' }).metricsAccess).toBe('disabled');
    expect(loadConfig({ NODE_ENV: 'development' }).metricsAccess).toBe('open');
    expect(loadConfig({ NODE_ENV: 'test' }).metricsAccess).toBe('open');
    expect(loadConfig({}).logFormat).toBe('json');
  });
});
