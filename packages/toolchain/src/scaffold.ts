/**
 * `npm run scaffold`: for every major version of the contract
 * (`openapi/vN/openapi.yaml`), creates `<handlers>/<operationId>.ts` for
 * each operation that has none, as a stub (`notImplementedHandler`: the
 * server answers 501 not_implemented, or an example under `npm run mock`; it
 * compiles whatever the operation declares), and rewrites the registries
 * `<handlers>/index.ts`: one per version, each listing exactly that
 * version's operations. Never overwrites a handler. A handler file serves
 * every version that has its operationId, or the versions its type names
 * (`Handler<'x', 'v2'>`): the others keep a stub for it.
 * Run `npm run generate` too: the registries are typed from `generated/`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { listOperations, loadDocument as loadContract, contractVersions } from '@spec-first/engine/testing';

/** One major version as scaffold sees it: its name (`v1`), its document as shown (`openapi/v1/openapi.yaml`), its operations. */
export interface ScaffoldVersion {
  name: string;
  document: string;
  operationIds: readonly string[];
}

/** The versions of the contract under `root`, oldest first, with their operations read from the YAML. */
export async function projectVersions(root: string): Promise<ScaffoldVersion[]> {
  return Promise.all(
    contractVersions(root).map(async (version) => ({
      name: version.name,
      document: path.relative(root, version.document).split(path.sep).join('/'),
      operationIds: listOperations(await loadContract(version.document)).map((operation) => operation.operationId),
    })),
  );
}

/** `Handler<'x'>` (v1 only), `Handler<'x', 'v2'>`, `Handler<'x', 'v1' | 'v2'>`: the type a handler of these versions has. */
const handlerType = (operationId: string, versions: string[]): string =>
  versions.length === 1 && versions[0] === 'v1' ? `Handler<'${operationId}'>` : `Handler<'${operationId}', ${versions.map((name) => `'${name}'`).join(' | ')}>`;

const stub = (operationId: string, versions: string[]): string => `import { notImplementedHandler } from './types';

// Scaffolded by \`npm run scaffold\`: the server answers 501 not_implemented (an example under
// \`npm run mock\`). Replace with the implementation, typed from the contract:
//   export const ${operationId}: ${handlerType(operationId, versions)} = async ({ params, query, body }, context) => ...
${stubLine(operationId)}
`;

/** The stub's declaration, wrapped as the formatter wraps a line over its 160 columns, so a long operationId passes `npm run lint`. */
const stubLine = (operationId: string): string => {
  const line = `export const ${operationId} = notImplementedHandler('${operationId}');`;
  return line.length <= 160 ? line : `export const ${operationId} = notImplementedHandler(\n  '${operationId}',\n);`;
};

/**
 * The versions a handler file says it serves, by its type (`Handler<'x', 'v2'>`;
 * `Handler<'x'>` is v1's); undefined when it names none (a stub serves them all).
 * A version that has the operation but is not named keeps a stub: the
 * operation can change between versions (implemented in v2, still 501 in v1).
 */
function declaredVersions(source: string, operationId: string): Set<string> | undefined {
  const match = new RegExp(`Handler<\\s*'${operationId}'\\s*(?:,\\s*([^>]+))?>`).exec(source);
  if (!match) return undefined;
  return new Set(match[1] === undefined ? ['v1'] : [...match[1].matchAll(/'([^']+)'/g)].map((version) => version[1]!));
}

const registry = (versions: readonly ScaffoldVersion[], served: ReadonlyMap<string, Set<string> | undefined>): string => {
  const all = [...new Set(versions.flatMap((version) => version.operationIds))].sort();
  const stubbedSomewhere = versions.some((version) => version.operationIds.some((id) => served.get(id)?.has(version.name) === false));
  const entry = (id: string, version: string): string => (served.get(id)?.has(version) === false ? `  ${id}: notImplementedHandler('${id}'),` : `  ${id},`);
  const blocks = versions.map(
    (version) => `/** ${version.document} */
export const ${version.name} = {
${[...version.operationIds]
  .sort()
  .map((id) => entry(id, version.name))
  .join('\n')}
} satisfies HandlerRegistry<'${version.name}'>;
`,
  );
  return `/**
 * One handler (or scaffolded stub) per operation of each major version of
 * the contract. \`satisfies HandlerRegistry<V>\` makes a missing handler, an
 * extra one, or a handler whose responses version V does not declare a
 * compile error; a handler listed under several versions is typed for all
 * of them (\`Handler<K, 'v1' | 'v2'>\`). Rewritten by \`npm run scaffold\`.
 *
 * @example const registry: HandlerRegistry<'${versions[0]!.name}'> = { ...handlers, ${all[0]}: notImplementedHandler('${all[0]}') };
 */
${stubbedSomewhere ? "import { notImplementedHandler, type HandlerRegistry } from './types';" : "import type { HandlerRegistry } from './types';"}
${all.map((id) => `import { ${id} } from './${id}';`).join('\n')}

${blocks.join('\n')}
/** The registries, by version. */
export const registries = { ${versions.map((version) => version.name).join(', ')} };

/** The first version's registry (what a single-version test replaces handlers of). */
export const handlers = ${versions[0]!.name};

// The handler types and contexts, for code outside this folder: this file is the folder's front door.
export { notImplementedHandler, type Handler, type HandlerRegistry, type Version } from './types';
export { handlerContexts } from './context';
`;
};

/**
 * Creates the missing handler stubs in `dir` (one file per operationId, for
 * every version that has it) and rewrites its registries; returns the
 * operationIds created.
 *
 * @example scaffold('src/service/handlers', projectVersions()) // ['adoptPet'] after adoptPet was added to openapi/v2/openapi.yaml
 */
export function scaffold(dir: string, versions: readonly ScaffoldVersion[]): string[] {
  if (versions.length === 0) throw new Error('no version of the contract (openapi/vN/openapi.yaml) to scaffold');
  const all = [...new Set(versions.flatMap((version) => version.operationIds))].sort();
  const created: string[] = [];
  for (const operationId of all) {
    const file = path.join(dir, `${operationId}.ts`);
    if (existsSync(file)) continue;
    const servedBy = versions.filter((version) => version.operationIds.includes(operationId)).map((version) => version.name);
    writeFileSync(file, stub(operationId, servedBy), { flag: 'wx' });
    created.push(operationId);
  }
  const served = new Map(all.map((operationId) => [operationId, declaredVersions(readFileSync(path.join(dir, `${operationId}.ts`), 'utf8'), operationId)]));
  // Written only when it changes: a watcher (npm run dev) sees no change otherwise.
  const index = path.join(dir, 'index.ts');
  const contents = registry(versions, served);
  if (!existsSync(index) || readFileSync(index, 'utf8') !== contents) writeFileSync(index, contents);
  return created;
}

/**
 * The handler files of `dir` that match no operation of any version (types.ts
 * holds the handler types, not a handler).
 *
 * @example orphanHandlers('src/service/handlers', projectVersions()) // ['adoptPet.ts'] after adoptPet was removed
 */
export function orphanHandlers(dir: string, versions: readonly ScaffoldVersion[]): string[] {
  const known = new Set<string>(versions.flatMap((version) => version.operationIds));
  return readdirSync(dir, { withFileTypes: true })
    .filter(
      (entry) =>
        entry.isFile() && entry.name !== 'index.ts' && entry.name !== 'types.ts' && entry.name !== 'context.ts' && !known.has(entry.name.replace(/\.ts$/, '')),
    )
    .map((entry) => entry.name);
}

/**
 * `npm run scaffold`: the missing stubs and the registries of `handlers`
 * (relative to `root`), with what changed said on stdout. Resolves to the exit code.
 *
 * @example process.exitCode = await runScaffold(process.cwd(), 'src/handlers');
 */
export async function runScaffold(root: string, handlers: string): Promise<number> {
  const versions = await projectVersions(root);
  const dir = path.join(root, handlers);
  for (const id of scaffold(dir, versions)) {
    const servedBy = versions.filter((version) => version.operationIds.includes(id)).map((version) => version.name);
    console.log(`created ${handlers}/${id}.ts for ${servedBy.join(', ')} (a stub: answers 501, or an example under npm run mock, until implemented)`);
  }
  for (const file of orphanHandlers(dir, versions)) {
    console.warn(
      `${handlers}/${file} matches no operation of any version of the contract (${versions.map((version) => version.document).join(', ')}): delete it or restore the operation`,
    );
  }
  console.log(
    `${handlers}/index.ts lists every operation of ${versions.map((version) => `${version.name} (${version.operationIds.length})`).join(', ')}; run \`npm run generate\` and \`npm run typecheck\`.`,
  );
  return 0;
}
