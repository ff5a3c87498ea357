/**
 * `npm run dev`: the document and the code, live. tsx watch restarts this
 * on every save of src/ or openapi/; each start regenerates generated/ (only
 * files that change are written), scaffolds a stub for each new operation
 * (never overwriting a handler), then serves. A document that cannot be
 * read is reported, and the next save is awaited. Types are checked by
 * `npm run typecheck`, not here: a type error never stops the server.
 */
import { applyDocuments } from '@spec-first/toolchain';
import { ROOT } from '../src/app';

async function main(): Promise<void> {
  try {
    const { regenerated, scaffolded, orphans } = await applyDocuments(ROOT, 'src/handlers');
    if (regenerated.length > 0) console.log(`regenerated ${regenerated.join(', ')}`);
    for (const file of scaffolded) console.log(`new operation: a stub in ${file} (501 until implemented)`);
    for (const file of orphans) console.warn(`${file} matches no operation of the documents: delete it or restore the operation`);
  } catch (error) {
    console.error(`the document cannot be used yet: ${(error as Error).message}\nwaiting for the next save`);
    return;
  }
  require('../src/server');
}

void main();
