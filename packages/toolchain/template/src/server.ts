/**
 * Entry point (`npm start`): the settings, the app, listening, and a graceful
 * shutdown on SIGTERM / SIGINT.
 */
import { createApp } from './app';
import { settingsOf, type Settings } from './settings';

async function main(): Promise<void> {
  let settings: Settings;
  try {
    settings = settingsOf(process.env, process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  // A document that cannot be served stops the start here, naming the document, the operation and why.
  const engine = await createApp(settings).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  for (const warning of engine.warnings) console.warn(`${warning.document}: ${warning.message}`);
  const server = engine.app.listen(settings.port, settings.host, () => {
    const stubs = engine.stubbed.length;
    const mode =
      settings.mock === 'stateful'
        ? '; every operation answered by the stateful mock, from memory'
        : `; ${stubs} of ${engine.operations.length} operations still stubs${settings.mock ? ', answering examples' : ''}`;
    console.log(
      `serving ${engine.documents.map((doc) => `${doc.basePath} (${doc.name})`).join(', ')} on http://${settings.host}:${settings.port} (docs: /docs${mode})`,
    );
  });
  server.on('error', (error) => {
    console.error(`cannot listen on ${settings.host}:${settings.port}: ${error.message}`);
    process.exit(1);
  });
  const stop = (): void => {
    engine.beginShutdown();
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
