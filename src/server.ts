/**
 * Entry point: `node dist/src/server.js` (npm start). Configuration, then the
 * composition root, then listening, then a graceful shutdown on SIGTERM /
 * SIGINT. Everything else lives in src/compose.ts.
 */
import './runtime/check-runtime';
import { settleUrlParseDeprecation } from './runtime/legacy-url-parse';
import { serve, type Serving } from './runtime/serve';
import { loadConfig, type Config } from './config';
import { compose, type Service } from './compose';
import { issueApiKey } from './auth/key-service';

/**
 * Starts the server as `npm start` does. `build` is the composition root; a
 * benchmark that measures phases passes its own `compose` call here (the
 * service itself never does).
 *
 * @example await startServer(process.env);
 */
export async function startServer(env: NodeJS.ProcessEnv = process.env, build: (config: Config) => Promise<Service> = compose): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  settleUrlParseDeprecation();

  // Handlers first, so a signal that arrives while starting also stops cleanly.
  let service: Service | undefined;
  let serving: Serving | undefined;
  let stopping = false;
  const stop = async (): Promise<never> => {
    await (serving ? serving.stop() : service?.close());
    service?.logger.info('stopped');
    process.exit(0);
  };
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

  service = await build(config);
  if (stopping) await stop();
  await ensureFirstKey(service, config);
  announceStubs(service);
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
    },
    `listening on http://${serving.address}:${serving.port}`,
  );
}

function announceStubs({ stubbed, logger, config }: Service): void {
  if (config.mockResponses) {
    logger.info({ mocked: stubbed }, `mock mode: ${stubbed.length} stubbed operation(s) answer with examples from the contract (Prefer: code=, example= pick others)`);
  } else if (stubbed.length > 0) {
    logger.info({ stubbed }, `${stubbed.length} operation(s) not implemented yet answer 501 (npm run mock answers them with examples)`);
  }
}

/**
 * In development, a database with no keys gets one free key, printed once, so
 * `npm start` is usable at once. Never in production.
 */
async function ensureFirstKey({ storage }: Service, config: Config): Promise<void> {
  if (config.nodeEnv === 'production' || (await storage.apiKeys.count()) > 0) return;
  const { key, record } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'first key (created by npm start)' });
  process.stdout.write(
    `\nNo API keys existed, so one was created (id ${record.id}, plan free). It is shown only this once:\n\n` +
      `  ${key}\n\n  curl -H "Authorization: Bearer ${key}" http://localhost:${config.port}/v1/pets\n\n` +
      'Create more with: npm run keys -- create --plan free --label NAME\n\n',
  );
}

if (require.main === module) {
  startServer().catch((error: unknown) => {
    console.error(`failed to start: ${(error as Error).message}`);
    process.exit(1);
  });
}
