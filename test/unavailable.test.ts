import { spawn, type ChildProcess } from 'node:child_process';
import request from 'supertest';
import { appOn, startTestApp, type TestApp } from './support/test-app';
import type { Storage } from '../src/service/storage';
import { openSharedState } from '../src/service/shared-state';
import { createLogger } from '../src/observability';
import { TEST_BACKEND } from './support/backend';
import { freePort } from './support/http';
import { isUnavailable } from '@spec-first/engine/testing';
import { READINESS_REUSE_MS } from '../src/public';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** The real storage, with pets and ping failing as when the database server is down. */
function databaseDown(storage: Storage): Storage {
  return {
    ...storage,
    pets: {
      list: () => Promise.reject(refused()),
      create: () => Promise.reject(refused()),
      get: () => Promise.reject(refused()),
      createdBy: () => Promise.reject(refused()),
      getVersioned: () => Promise.reject(refused()),
      update: () => Promise.reject(refused()),
    },
    orders: {
      place: () => Promise.reject(refused()),
      get: () => Promise.reject(refused()),
      createdBy: () => Promise.reject(refused()),
      list: () => Promise.reject(refused()),
      close: () => Promise.reject(refused()),
    },
    ping: () => Promise.reject(refused()),
    close: () => storage.close(),
  };
}

describe('a database outage', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('answers 503 unavailable with Retry-After (not 500), with the rate-limit headers', async () => {
    t = await startTestApp();
    // Same database and key; the pets repository fails as if its server were down.
    const down = await appOn(databaseDown(t.storage), { logLevel: 'silent', settings: { validateResponses: true } });
    const { api } = down;
    for (const res of [
      await api.get('/v1/pets').set('Authorization', t.auth).expect(503),
      await api.post('/v1/pets').set('Authorization', t.auth).send({ name: 'Rex', categoryId: 1 }).expect(503),
      await api.get('/v1/pets/1').set('Authorization', t.auth).expect(503),
    ]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 'unavailable', status: 503, message: expect.stringContaining('temporarily unavailable') });
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBeDefined();
      expect(res.text).not.toContain('ECONNREFUSED');
    }
    const ready = await api.get('/readyz').expect(503);
    expect(ready.body).toEqual({ status: 'unavailable', checks: expect.objectContaining({ database: 'error' }) });
    expect(ready.text).not.toContain('ECONNREFUSED'); // details are logged, not shown
    await down.close();
  });

  it('a key lookup that fails during the outage is a 503 with the rate-limit headers too, not counted against the IP', async () => {
    t = await startTestApp();
    const storage = t.storage;
    const keysDown: Storage = {
      ...storage,
      apiKeys: { ...storage.apiKeys, findByHash: () => Promise.reject(refused()) } as Storage['apiKeys'],
    };
    const down = await appOn(keysDown, { logLevel: 'silent' });
    const { api } = down;
    for (let i = 0; i < 70; i++) {
      const res = await api.get('/v1/pets').set('Authorization', t.auth).expect(503); // never 429: nothing counted
      expect(res.body.code).toBe('unavailable');
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['ratelimit-policy']).toBe('"ip";q=60;w=60');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
    }
    await down.close();
  });

  it('classifies the failures of a dependency, and only those, as unavailable', () => {
    const pgTimeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const pgShutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const redisReadOnly = Object.assign(new Error("READONLY You can't write against a read only replica."), { name: 'ReplyError' });
    const sqliteBusy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const wrapped = new Error('query failed', { cause: refused() });
    for (const error of [pgTimeout, pgShutdown, redisReadOnly, sqliteBusy, wrapped, refused()]) expect(isUnavailable(error)).toBe(true);
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    const constraint = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    for (const error of [bug, constraint, undefined, 'text']) expect(isUnavailable(error)).toBe(false);
  });

  it('/readyz is 200 when every dependency answers; /healthz stays liveness only', async () => {
    t = await startTestApp();
    const ready = await t.api.get('/readyz').expect(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks.database).toBe('ok');
    if (TEST_BACKEND === 'postgres') expect(ready.body.checks.redis).toBe('ok');
    await t.api.get('/healthz').expect(200);
  });
});

const describeRedis = TEST_BACKEND === 'postgres' ? describe : describe.skip;

describeRedis('Redis unreachable (a private redis-server this test stops and restarts)', () => {
  let redis: ChildProcess | undefined;
  let t: TestApp | undefined;

  async function startRedis(port: number): Promise<ChildProcess> {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'pipe' });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Ready to accept connections') && resolve());
      child.once('exit', (code) => reject(new Error(`redis-server exited ${code}`)));
    });
    return child;
  }
  const stopRedis = async (child: ChildProcess) => {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  };

  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (redis && redis.exitCode === null && redis.signalCode === null) await stopRedis(redis);
    redis = undefined;
  });

  it('fails closed: 503 unavailable at once (no hang), /readyz 503, and recovers when Redis is back', async () => {
    const port = await freePort();
    redis = await startRedis(port);
    const base = await startTestApp();
    const faulty = await appOn(base.storage, {
      logLevel: 'silent',
      settings: { redisUrl: `redis://127.0.0.1:${port}`, redisKeyPrefix: 'pas:fault:', validateResponses: true },
    });
    t = {
      ...base,
      close: async () => {
        await faulty.close();
        await base.close();
      },
    };
    const { api } = faulty;
    await api.get('/v1/pets').set('Authorization', base.auth).expect(200);

    await stopRedis(redis);
    const started = Date.now();
    const res = await api.get('/v1/pets').set('Authorization', base.auth).expect(503);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(res.body.code).toBe('unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect((await api.get('/readyz').expect(503)).body.checks.redis).toMatch(/^error/);

    redis = await startRedis(port);
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      // 503 until Redis answers again (checked above); the 200 is checked below.
      status = (await request(faulty.app).get('/v1/pets').set('Authorization', base.auth)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(200);
    await api.get('/v1/pets').set('Authorization', base.auth).expect(200);
    // The 503 above is the answer until it is older than READINESS_REUSE_MS.
    await new Promise((resolve) => setTimeout(resolve, READINESS_REUSE_MS));
    await api.get('/readyz').expect(200);
  });

  it('refuses to start when Redis cannot be reached', async () => {
    const port = await freePort();
    const base = await startTestApp();
    t = base;
    await expect(
      openSharedState({ redisUrl: `redis://127.0.0.1:${port}`, redisKeyPrefix: 'pas:' }, base.storage.apiKeys, createLogger('silent'), () => undefined),
    ).rejects.toThrow(/REDIS_URL: cannot connect to 127\.0\.0\.1/);
  });
});
