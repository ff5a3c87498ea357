/**
 * The composition root: the documents under openapi/, their handlers, the
 * key store, and the engine that serves them. Routing, security, validation,
 * errors, mocks and docs all come from the documents.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createEngine, documentsIn, type Engine } from '@spec-first/engine';
import { handlerContexts, registries } from './handlers';
import { keyStore } from './keys';
import { settingsOf, type Settings } from './settings';

/** The project's root: the folder that holds openapi/ (from src/ under tsx, from dist/src/ once built). */
export const ROOT = ((start: string): string => {
  for (let dir = start; path.dirname(dir) !== dir; dir = path.dirname(dir)) if (existsSync(path.join(dir, 'openapi'))) return dir;
  throw new Error(`no openapi/ folder above ${start}`);
})(__dirname);

/**
 * The engine serving every version of the contract (`openapi/vN/`) under `/vN`.
 *
 * @example const { app } = await createApp(settingsOf(process.env)); app.listen(3000);
 */
export async function createApp(settings: Settings = settingsOf(process.env)): Promise<Engine> {
  const keys = keyStore(path.resolve(ROOT, settings.keysFile));
  try {
    keys.list();
  } catch (error) {
    throw new Error(`KEYS_FILE ${settings.keysFile} cannot be read: ${(error as Error).message}`);
  }
  return createEngine({
    documents: documentsIn(path.join(ROOT, 'openapi')).map((version) => ({
      name: version.name,
      document: version.document,
      source: path.relative(ROOT, version.document),
      handlers: registries[version.name as keyof typeof registries] ?? {},
      context: handlerContexts(version.name),
    })),
    credentials: { key: (key) => keys.check(key) },
    tokens: settings.tokens,
    mock: settings.mock,
  });
}
