/**
 * Entry point: `node dist/src/server.js` (npm start). Configuration, then the
 * composition root, then listening, then a graceful shutdown on SIGTERM /
 * SIGINT. Everything else lives in src/compose.ts.
 */
import './runtime/check-runtime';
import { settleUrlParseDeprecation } from './runtime';
import { serve, type Serving } from './runtime';
import { loadConfig, withArguments, type Config } from './config';
import { compose, type Service } from './compose';
import { issueApiKey } from './service/keys';
import cluster from 'node:cluster';
import { createLogger, flushLogger } from './observability';
import { runPrimary } from './runtime';
import { openStorage } from './service/storage';
import type { Storage } from './service/storage';

/**
 * Starts the server as `npm start` does: the configuration read from `env`,
 * the service composed (src/compose.ts), served until SIGTERM. `--stateful`
 * among `args` (`npm run mock -- --stateful`) is MOCK_RESPONSES=stateful.
 *
 * @example await startServer(process.env, process.argv.slice(2));
 */
export async function startServer(env: NodeJS.ProcessEnv = process.env, args: readonly string[] = process.argv.slice(2)): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(withArguments(env, args));
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  settleUrlParseDeprecation();
  if (config.workers > 1 && cluster.isPrimary) {
    // WORKERS=N: this process only supervises; each worker runs the rest of this function.
    const logger = createLogger(config.logLevel, undefined, config.logFormat);
    await runPrimary({ config, logger, prepare: () => prepareDatabase(config) });
    return;
  }

  // Handlers first, so a signal that arrives while starting also stops cleanly.
  let service: Service | undefined;
  let serving: Serving | undefined;
  let stopping = false;
  let stopped: Promise<never> | undefined;
  // Once, whichever of the signal and the end of the start calls it first.
  const stop = (): Promise<never> =>
    (stopped ??= (async () => {
      await (serving ? serving.stop() : service?.close());
      service?.logger.info('stopped');
      if (service) await flushLogger(service.logger);
      process.exit(0);
    })());
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second Ctrl-C means "now"; a repeated SIGTERM from a supervisor does not cut requests short.
      if (signal !== 'SIGINT') return;
      service?.logger.warn({ signal }, 'second SIGINT: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    service?.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    if (service) void stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // An error nothing caught: logged with the lines before it, then exit, since the process state is unknown.
  const onFatal = (error: unknown, origin: string): void => {
    if (!service) {
      console.error(`${origin}:`, error);
      process.exit(1);
    }
    service.logger.fatal({ err: error, origin }, `${origin}: exiting`);
    void flushLogger(service.logger).then(() => process.exit(1));
  };
  process.on('uncaughtException', (error) => onFatal(error, 'uncaught exception'));
  process.on('unhandledRejection', (reason) => onFatal(reason, 'unhandled rejection'));

  // A worker stops when its primary is gone, rather than serving without shared counts.
  if (cluster.isWorker) process.once('disconnect', () => onSignal('SIGTERM'));

  service = await compose(config);
  if (stopping) await stop();
  // With WORKERS=N the primary gave the first key; one worker speaks for all.
  if (cluster.isPrimary) await ensureFirstKey(service.storage, config);
  if (cluster.isPrimary || cluster.worker?.id === 1) announceStubs(service);
  serving = await serve(service);
  if (stopping) await stop();
  service.logger.info(
    {
      address: serving.address,
      port: serving.port,
      database: service.storage.backend,
      rateLimitStore: service.sharedState,
      env: config.nodeEnv,
      node: process.version,
      mock: config.mockResponses,
      ...(cluster.worker && { worker: cluster.worker.id }),
    },
    `${cluster.worker ? `worker ${cluster.worker.id} ` : ''}listening on http://${serving.address}:${serving.port}`,
  );
}

function announceStubs({ stubbed, logger, config }: Service): void {
  if (config.mockResponses === 'stateful') {
    logger.info(
      'stateful mock: every operation is answered by the mock, not its handler; what clients create on a collection/item pair is kept in memory until the server stops (Prefer: code=, example= ask for examples)',
    );
  } else if (config.mockResponses) {
    logger.info(
      { mocked: stubbed },
      `mock mode: ${stubbed.length} stubbed operation(s) answer with examples from the contract (Prefer: code=, example= pick others)`,
    );
  } else if (stubbed.length > 0) {
    logger.info({ stubbed }, `${stubbed.length} operation(s) not implemented yet answer 501 (npm run mock answers them with examples)`);
  }
}

/**
 * In development, a database with no keys gets one free key, printed once, so
 * `npm start` is usable at once. Never in production. It goes to stderr,
 * where a person at the terminal reads it: stdout is the JSON log stream,
 * which log shippers keep.
 */
async function ensureFirstKey(storage: Pick<Storage, 'apiKeys'>, config: Config): Promise<void> {
  if (config.nodeEnv === 'production' || (await storage.apiKeys.count()) > 0) return;
  const { key, record } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'first key (created by npm start)' });
  process.stderr.write(
    `\nNo API keys existed, so one was created (id ${record.id}, plan free). It is shown only this once:\n\n` +
      `  ${key}\n\n  curl -H "Authorization: Bearer ${key}" http://localhost:${config.port}/v1/pets\n\n` +
      'Create more with: npm run keys -- create --plan free --label NAME\n\n',
  );
}

/**
 * WORKERS=N: the database is migrated and given its first key once, by the
 * primary, before any worker opens it.
 */
async function prepareDatabase(config: Config): Promise<void> {
  const storage = await openStorage(config.databaseUrl);
  try {
    await ensureFirstKey(storage, config);
  } finally {
    await storage.close();
  }
}

if (require.main === module) {
  startServer().catch((error: unknown) => {
    console.error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  });
}
