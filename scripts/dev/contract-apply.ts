/**
 * What a good contract save does to the code, in process (no npm, no tsx
 * start per save): `npm run generate` (rewrites only the files of generated/
 * that change) then `npm run scaffold` (a stub per new operation, never
 * overwriting a handler; the registry rewritten only when it changes). The
 * same functions as those scripts, so the results are identical.
 */
import type * as Toolchain from '@spec-first/toolchain';

/** The toolchain (its generator loads openapi-typescript and the Redocly core: a second), loaded when first needed, after the lint has started. */
const toolchain = (): typeof Toolchain => require('@spec-first/toolchain') as typeof Toolchain;

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

/** Writes what `renderContract` rendered, then scaffolds the stubs of new operations (the toolchain's `applyDocuments`, on the store's handlers). */
export function applyContract(root: string, rendered: Map<string, string>): Promise<Toolchain.Applied> {
  return toolchain().applyDocuments(root, 'src/service/handlers', rendered);
}
