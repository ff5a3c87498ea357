/**
 * `npm run scaffold`: creates `src/handlers/<operationId>.ts` for every
 * operation of the contract that has none, as a stub
 * (`notImplementedHandler`: the server answers 501 not_implemented, or an
 * example under `npm run mock`; it compiles whatever the operation declares),
 * and rewrites the registry `src/handlers/index.ts`. Never overwrites a handler.
 * Run `npm run generate` first so it sees the latest contract.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { operationTable, type OperationId } from '../generated/v1/operations';

const HANDLERS_DIR = path.resolve(__dirname, '..', 'src', 'handlers');

const stub = (operationId: string): string => `import { notImplementedHandler } from './types/stub';

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
  writeFileSync(path.join(dir, 'index.ts'), registry(sorted));
  return created;
}

function main(): void {
  const operationIds = Object.keys(operationTable) as OperationId[];
  for (const id of scaffold(HANDLERS_DIR, operationIds)) {
    console.log(`created src/handlers/${id}.ts (a stub: answers 501, or an example under npm run mock, until implemented)`);
  }
  const known = new Set<string>(operationIds);
  // types/ holds the handler types and the stub helper, not handlers.
  for (const file of readdirSync(HANDLERS_DIR, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name)) {
    if (file !== 'index.ts' && !known.has(file.replace(/\.ts$/, ''))) {
      console.warn(`src/handlers/${file} matches no operation of the contract: delete it or restore the operation`);
    }
  }
  console.log('src/handlers/index.ts lists every operation of the contract; run `npm run typecheck`.');
}

if (require.main === module) main();
