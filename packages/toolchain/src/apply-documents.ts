import path from 'node:path';
import { renderAll, writeGenerated } from './generate/render';
import { orphanHandlers, projectVersions, scaffold } from './scaffold';

/** What a change of the documents did to the code, by path relative to the project. */
export interface Applied {
  /** Files of generated/ that changed. */
  regenerated: string[];
  /** Stub files created, e.g. `src/handlers/adoptPet.ts`. */
  scaffolded: string[];
  /** Handler files that match no operation any more. */
  orphans: string[];
  /** The operationIds of every version now. */
  operationIds: string[];
}

/**
 * What a save of the documents does to the code, as the dev loops run it:
 * `generate` (only the files that differ are written) then `scaffold` (a
 * stub per new operation, never overwriting a handler). `rendered` is
 * `renderAll(root)` when the caller has it already.
 *
 * @example const { scaffolded } = await applyDocuments(process.cwd(), 'src/handlers'); // ['src/handlers/adoptPet.ts']
 */
export async function applyDocuments(root: string, handlers: string, rendered?: Map<string, string>): Promise<Applied> {
  const regenerated = await writeGenerated(rendered ?? (await renderAll(root)), path.join(root, 'generated'));
  const versions = await projectVersions(root);
  const dir = path.join(root, handlers);
  return {
    regenerated,
    scaffolded: scaffold(dir, versions).map((id) => `${handlers}/${id}.ts`),
    orphans: orphanHandlers(dir, versions).map((file) => `${handlers}/${file}`),
    operationIds: [...new Set(versions.flatMap((version) => version.operationIds))],
  };
}
