import { startServer } from './support/processes';
import { tempDir } from './support/paths';
import { loadConfig } from '../src/config';
import { checkedFetch } from './support/http';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { metricsRoute } from '../src/public';
import { createMetrics } from '../src/observability';
import { errorMapper } from '@spec-first/engine/testing';

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
      expect((metrics.body as { code: string }).code).toBe('not_found');
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
  it('token when METRICS_TOKEN is set; else loopback clients only in development and test, disabled in production', () => {
    expect(loadConfig({ METRICS_TOKEN: TOKEN, NODE_ENV: 'production' }).metricsAccess).toEqual({ token: TOKEN });
    expect(loadConfig({ METRICS_TOKEN: TOKEN }).metricsAccess).toEqual({ token: TOKEN });
    expect(loadConfig({ NODE_ENV: 'production' }).metricsAccess).toBe('disabled');
    expect(loadConfig({ NODE_ENV: 'development' }).metricsAccess).toBe('loopback');
    expect(loadConfig({ NODE_ENV: 'test' }).metricsAccess).toBe('loopback');
    expect(loadConfig({}).logFormat).toBe('json');
  });
});

describe('safer defaults when NODE_ENV is unset (the README npm start)', () => {
  it('serves on loopback, prints the first key on stderr (never into the JSON log on stdout), and /metrics answers this machine', async () => {
    // An empty NODE_ENV is unset, as in the shell (startServer would default it to development).
    const server = await startServer({ NODE_ENV: '', DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
    try {
      await waitForOutput(server.stderr, /pas_[A-Za-z0-9_-]{43}/);
      const key = /No API keys existed, so one was created[\s\S]*?(pas_[A-Za-z0-9_-]{43})/.exec(server.stderr())?.[1];
      expect(key).toBeDefined();
      expect(server.stdout()).not.toContain(key!);
      // Every stdout line is a JSON log line.
      for (const line of server.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
      expect(
        JSON.parse(
          server
            .stdout()
            .split('\n')
            .find((line) => line.includes('listening'))!,
        ),
      ).toMatchObject({ address: '127.0.0.1', env: 'development' });
      expect((await checkedFetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('without METRICS_TOKEN, /metrics refuses a client that is not on this machine, whatever X-Forwarded-For says', async () => {
    const app = express();
    app.set('trust proxy', 1);
    app.use((req, _res, next) => {
      Object.defineProperty(req.socket, 'remoteAddress', { value: req.headers['x-peer'], configurable: true });
      next();
    });
    app.get('/metrics', metricsRoute(createMetrics(), 'loopback'));
    app.use(errorMapper(pino({ level: 'silent' })));
    for (const peer of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) await request(app).get('/metrics').set('X-Peer', peer).expect(200);
    const refused = await request(app).get('/metrics').set('X-Peer', '203.0.113.5').set('X-Forwarded-For', '127.0.0.1').expect(401);
    expect(refused.body).toEqual({
      code: 'unauthorized',
      status: 401,
      message: expect.stringMatching(/^without METRICS_TOKEN, GET \/metrics answers clients on this machine only/),
    });
  });
});
