/**
 * `npm run scaffold`: creates `src/handlers/<operationId>.ts` for every
 * operation of the contract that has none, as a stub
 * (`notImplementedHandler`: the server answers 501 not_implemented, or an
 * example under `npm run mock`; it compiles whatever the operation declares),
 * and rewrites the registry `src/handlers/index.ts`. Never overwrites a handler.
 * Run `npm run generate` first so it sees the latest contract.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { operationTable, type OperationId } from '../generated/operations';

const HANDLERS_DIR = path.resolve(__dirname, '..', 'src', 'handlers');

const stub = (operationId: string): string => `import { notImplementedHandler } from './stub';

// Scaffolded by \`npm run scaffold\`: the server answers 501 not_implemented (an example under
// \`npm run mock\`). Replace with the implementation, typed from the contract:
//   export const ${operationId}: Handler<'${operationId}'> = async ({ params, query, body }, { pets, caller }) => ...
export const ${operationId} = notImplementedHandler('${operationId}');
`;

const registry = (operationIds: string[]): string => `/**
 * One handler (or scaffolded stub) per operation of the contract.
 * \`satisfies HandlerRegistry\` makes a missing handler, an extra one, or a
 * handler whose responses the contract does not declare a compile error.
 * Rewritten by \`npm run scaffold\`.
 */
import type { HandlerRegistry } from './types';
${operationIds.map((id) => `import { ${id} } from './${id}';`).join('\n')}

export const handlers = {
${operationIds.map((id) => `  ${id},`).join('\n')}
} satisfies HandlerRegistry;
`;

/** Creates the missing handler stubs in `dir` and rewrites its registry; returns the operationIds created. */
export function scaffold(dir: string, operationIds: readonly string[]): string[] {
  const sorted = [...operationIds].sort();
  const created: string[] = [];
  for (const operationId of sorted) {
    const file = path.join(dir, `${operationId}.ts`);
    if (existsSync(file)) continue;
    writeFileSync(file, stub(operationId), { flag: 'wx' });
    created.push(operationId);
  }
  // Rewritten only when it changes, so a watcher (npm run dev, tsc --watch) sees no change otherwise.
  const index = path.join(dir, 'index.ts');
  const contents = registry(sorted);
  if (!existsSync(index) || readFileSync(index, 'utf8') !== contents) writeFileSync(index, contents);
  return created;
}

/** The files of src/handlers/ that are not handlers: the registry, the stub helper, the handler types. */
const NOT_HANDLERS = new Set(['index.ts', 'stub.ts', 'types.ts']);

/** The handler files of `dir` that match no operation: left behind when an operation was removed. */
export function orphanHandlers(dir: string, operationIds: readonly string[]): string[] {
  const known = new Set<string>(operationIds);
  return readdirSync(dir).filter((file) => file.endsWith('.ts') && !NOT_HANDLERS.has(file) && !known.has(file.replace(/\.ts$/, '')));
}

function main(): void {
  const operationIds = Object.keys(operationTable) as OperationId[];
  for (const id of scaffold(HANDLERS_DIR, operationIds)) {
    console.log(`created src/handlers/${id}.ts (a stub: answers 501, or an example under npm run mock, until implemented)`);
  }
  for (const file of orphanHandlers(HANDLERS_DIR, operationIds)) {
    console.warn(`src/handlers/${file} matches no operation of the contract: delete it or restore the operation`);
  }
  console.log('src/handlers/index.ts lists every operation of the contract; run `npm run typecheck`.');
}

if (require.main === module) main();
