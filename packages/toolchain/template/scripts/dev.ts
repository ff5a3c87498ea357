/**
 * `npm run dev`: the document and the code, live. tsx watch restarts this
 * on every save of src/ or openapi/; each start regenerates generated/ (only
 * files that change are written), scaffolds a stub for each new operation
 * (never overwriting a handler), then serves. A document that cannot be
 * read is reported, and the next save is awaited. Types are checked by
 * `npm run typecheck`, not here: a type error never stops the server.
 */
import path from 'node:path';
import { projectVersions, renderAll, scaffold, writeGenerated } from '@spec-first/toolchain';
import { ROOT } from '../src/app';

async function main(): Promise<void> {
  try {
    const regenerated = await writeGenerated(await renderAll(ROOT), path.join(ROOT, 'generated'));
    const created = scaffold(path.join(ROOT, 'src', 'handlers'), await projectVersions(ROOT));
    if (regenerated.length > 0) console.log(`regenerated ${regenerated.join(', ')}`);
    for (const id of created) console.log(`new operation ${id}: a stub in src/handlers/${id}.ts (501 until implemented)`);
  } catch (error) {
    console.error(`the document cannot be used yet: ${(error as Error).message}\nwaiting for the next save`);
    return;
  }
  require('../src/server');
}

void main();
