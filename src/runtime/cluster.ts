import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { flushLogger } from '../observability';
import { servePrimarySharedState } from '../service/shared-state';
import { serveClusterMetrics } from '../observability';

/** A worker that dies this soon after starting, this many times in a row, is a crash loop: the primary gives up. */
const CRASH_LOOP_WINDOW_MS = 10_000;
const CRASH_LOOP_LIMIT = 5;
/** Beyond the workers' own shutdown timeout: then they are killed. */
const STOP_GRACE_MS = 5_000;

export interface PrimaryOptions {
  config: Config;
  logger: Logger;
  /** Runs once before any worker starts: migrations, the first key (the database is ready when they open it). */
  prepare: () => Promise<void>;
}

/**
 * `WORKERS=N`: this process becomes the node:cluster primary. It prepares the
 * database once, holds the rate-limit counts and relays bans and key changes
 * (src/service/shared-state/cluster-state.ts) unless REDIS_URL shares them, gathers
 * the workers' metrics for GET /metrics (src/observability/cluster-metrics.ts), starts N
 * workers (each the whole server, on the shared port), replaces a worker
 * that dies, and on SIGTERM / SIGINT lets every worker drain, then exits 0.
 *
 * @example if (config.workers > 1 && cluster.isPrimary) return runPrimary({ config, logger, prepare });
 */
export async function runPrimary({ config, logger, prepare }: PrimaryOptions): Promise<void> {
  let stopping = false;
  const exitCodes: number[] = [];
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'shutting down: every worker finishes its in-flight requests');
    for (const worker of liveWorkers()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of liveWorkers()) {
        logger.warn({ worker: worker.id, workerPid: worker.process.pid }, 'worker still running after the shutdown timeout: killed');
        worker.process.kill('SIGKILL');
      }
    }, config.shutdownTimeoutMs + STOP_GRACE_MS).unref();
    if (liveWorkers().length === 0) void exit();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const exit = async (code = exitCodes.some((status) => status !== 0) ? 1 : 0): Promise<never> => {
    logger.info({ exitCode: code }, 'stopped');
    await flushLogger(logger);
    process.exit(code);
  };

  await prepare();
  if (stopping) return void (await exit());
  if (!config.redisUrl) servePrimarySharedState();
  serveClusterMetrics();

  const startedAt = new Map<number, number>();
  let quickDeaths = 0;
  const start = (): Worker => {
    const worker = cluster.fork();
    startedAt.set(worker.id, Date.now());
    return worker;
  };

  let announced = false;
  const listening = new Set<number>();
  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    if (announced || listening.size < config.workers) return;
    announced = true;
    logger.info(
      {
        address: address.address,
        port: address.port,
        workers: config.workers,
        database: config.databaseUrl.split(':', 1)[0],
        rateLimitStore: config.redisUrl ? 'redis' : 'cluster',
        env: config.nodeEnv,
        node: process.version,
      },
      `listening on http://${address.address ?? config.host}:${address.port} with ${config.workers} workers`,
    );
  });
  cluster.on('exit', (worker, code, signal) => {
    const served = listening.delete(worker.id);
    if (stopping) {
      // A worker still loading its modules when our SIGTERM came dies of it before its own handler exists: it served nothing, so nothing was cut short.
      const clean = code === 0 || (signal === 'SIGTERM' && !served);
      exitCodes.push(clean ? 0 : (code ?? 1));
      if (liveWorkers().length === 0) void exit();
      return;
    }
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
    quickDeaths = lived < CRASH_LOOP_WINDOW_MS ? quickDeaths + 1 : 0;
    if (quickDeaths >= CRASH_LOOP_LIMIT) {
      logger.fatal({ worker: worker.id, code, signal }, `${CRASH_LOOP_LIMIT} workers died within ${CRASH_LOOP_WINDOW_MS / 1000} s of starting: giving up`);
      stopping = true;
      for (const other of liveWorkers()) other.process.kill('SIGTERM');
      if (liveWorkers().length === 0) void exit(1);
      return;
    }
    const replacement = start();
    logger.error({ worker: worker.id, workerPid: worker.process.pid, code, signal, replacement: replacement.id }, 'worker died: replaced');
  });
  for (let index = 0; index < config.workers; index++) start();
}

function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
}
