/**
 * What a good contract save does to the code, in process (no npm, no tsx
 * start per save): `npm run generate` (rewrites only the files of generated/
 * that change) then `npm run scaffold` (a stub per new operation, never
 * overwriting a handler; the registry rewritten only when it changes). The
 * same functions as those scripts, so the results are identical.
 */
import path from 'node:path';
import type * as Toolchain from '@spec-first/toolchain';

/** The toolchain (its generator loads openapi-typescript and the Redocly core: a second), loaded when first needed, after the lint has started. */
const toolchain = (): typeof Toolchain => require('@spec-first/toolchain') as typeof Toolchain;

export interface Applied {
  /** Files of generated/ that changed. */
  regenerated: string[];
  /** Stub files created, e.g. `src/service/handlers/adoptPet.ts`. */
  scaffolded: string[];
  /** Handler files that match no operation any more. */
  orphans: string[];
  /** The operationIds of the contract now (every version). */
  operationIds: string[];
}

/** Renders generated/ from every version of the contract at `root` (throws when the generator refuses one); writes nothing. */
export async function renderContract(root: string): Promise<Map<string, string>> {
  // openapi-typescript prints the problems it finds (` ✘  Can't resolve $ref ...`) before it throws;
  // the dev loop reports them itself, with file and line, from the lint.
  const said: string[] = [];
  const { error, warn } = console;
  console.error = console.warn = (...args: unknown[]) =>
    said.push(
      args
        .join(' ')
        // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colour codes (ESC [ ... m) openapi-typescript prints
        .replace(/\x1b\[[0-9;]*m/g, '')
        .trim(),
    );
  try {
    return await toolchain().renderAll(root);
  } catch (problem) {
    throw new Error(said.join('; ') || (problem as Error).message);
  } finally {
    Object.assign(console, { error, warn });
  }
}

/** Writes what `renderContract` rendered, then scaffolds the stubs of new operations. */
export async function applyContract(root: string, rendered: Map<string, string>): Promise<Applied> {
  const { writeGenerated, projectVersions, scaffold, orphanHandlers } = toolchain();
  const regenerated = await writeGenerated(rendered, path.join(root, 'generated'));
  const versions = await projectVersions(root);
  const operationIds = [...new Set(versions.flatMap((version) => version.operationIds))];
  const handlersDir = path.join(root, 'src', 'service', 'handlers');
  const scaffolded = scaffold(handlersDir, versions).map((id) => `src/service/handlers/${id}.ts`);
  const orphans = orphanHandlers(handlersDir, versions).map((file) => `src/service/handlers/${file}`);
  return { regenerated, scaffolded, orphans, operationIds };
}
