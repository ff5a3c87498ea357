/**
 * Entry point: `node dist/src/server.js` (npm start). Reads and validates the
 * configuration, opens and migrates the database, serves, and shuts down
 * gracefully on SIGTERM / SIGINT.
 */
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig, type Config } from './config';
import { createLogger } from './logger';
import { openStorage } from './storage/open-storage';
import { issueApiKey } from './keys/api-key-service';
import type { Storage } from './storage/storage';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  const storage = await openStorage(config.databaseUrl);
  await ensureFirstKey(storage, config);

  const app = createApp({ storage, logger, validateResponses: config.validateResponses, logRequests: true });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { address, port } = server.address() as AddressInfo;
  logger.info({ address, port, database: storage.backend, env: config.nodeEnv }, `listening on http://${address}:${port}`);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs).unref();
    server.close(async () => {
      clearTimeout(force);
      await storage.close();
      logger.info('stopped');
      process.exit(0);
    });
    // Keep-alive connections with no request in flight would hold close() open.
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * In development, a database with no keys gets one free key, printed once, so
 * `npm start` is usable at once. Never in production.
 */
async function ensureFirstKey(storage: Storage, config: Config): Promise<void> {
  if (config.nodeEnv === 'production' || (await storage.apiKeys.count()) > 0) return;
  const { key, record } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'first key (created by npm start)' });
  process.stdout.write(
    `\nNo API keys existed, so one was created (id ${record.id}, plan free). It is shown only this once:\n\n` +
      `  ${key}\n\n  curl -H "Authorization: Bearer ${key}" http://localhost:${config.port}/v1/pets\n\n` +
      'Create more with: npm run keys -- create --plan free --label NAME\n\n',
  );
}

main().catch((error: unknown) => {
  console.error(`failed to start: ${(error as Error).message}`);
  process.exit(1);
});
