/**
 * The main script of a dev server process: `node --import tsx --import
 * scripts/dev/server-hooks.ts scripts/dev/server-entry.ts src/server.ts`.
 *
 * A reload should not pay for starting Node and loading the libraries (about
 * half a second of CPU here): `npm run dev` keeps one process on standby
 * that has already loaded every dependency of package.json (node_modules
 * does not change while it runs) but nothing of src/. On "go" it runs
 * src/server.ts as the main module, exactly as `node src/server.ts` would
 * (`require.main === module` holds), so it reads the sources of that moment.
 * With DEV_SERVER_GO=now it does not wait (the first start).
 */
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';

const entry = path.resolve(process.argv[2] ?? 'src/server.ts');

function run(): void {
  process.argv.splice(1, 2, entry);
  (Module as unknown as { runMain(main?: string): void }).runMain(entry);
}

if (process.env['DEV_SERVER_GO'] === 'now' || !process.send) {
  run();
} else {
  const manifest = JSON.parse(readFileSync(path.resolve('package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const pretty = process.env['LOG_FORMAT'] === 'pretty' ? ['pino-pretty'] : [];
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...pretty]) {
    try {
      require(name);
    } catch {
      // an optional or ESM-only library: loaded by the server when it needs it
    }
  }
  const channel = process.channel as { ref(): void; unref(): void } | undefined;
  const onMessage = (message: { type?: string }): void => {
    if (message.type !== 'go') return;
    process.off('message', onMessage);
    channel?.unref(); // from now on the server keeps the process alive, as it would alone
    run();
  };
  process.on('message', onMessage);
  channel?.ref(); // waiting for "go" (server-hooks.ts unreferenced the channel)
  process.send({ type: 'standby' });
}
