import path from 'node:path';
import { parseArgs } from 'node:util';
import { contractVersions } from '@spec-first/engine/testing';
import { renderAll, renderGenerated, writeGenerated } from './render';

/**
 * `npm run generate` (`--check`: exit 1 when a generated file is stale, for
 * CI; `--spec FILE --out DIR`: one document elsewhere). Resolves to the exit code.
 *
 * @example process.exitCode = await runGenerate(['--check'], process.cwd());
 */
export async function runGenerate(args: readonly string[], root: string): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { check: { type: 'boolean', default: false }, spec: { type: 'string' }, out: { type: 'string' } },
  });
  const check = values.check!;
  const generatedDir = path.join(root, 'generated');
  const one = values.spec !== undefined || values.out !== undefined;
  if (!one && contractVersions(root).length === 0) {
    console.error(`generate: no document in ${path.join(root, 'openapi')}: each major version is openapi/vN/openapi.yaml (or .json)`);
    return 2;
  }
  const files = one ? await renderGenerated(values.spec ?? contractVersions(root)[0]!.document, root) : await renderAll(root);
  const outDir = one ? path.resolve(values.out ?? path.join(generatedDir, 'v1')) : generatedDir;
  const differing = await writeGenerated(files, outDir, { check });
  if (check && differing.length > 0) {
    console.error(
      `Generated files are stale: ${differing.join(', ')}.\nThe contract changed since they were generated: run \`npm run generate\` and commit the result.`,
    );
    return 1;
  }
  const versions = one
    ? path.relative(root, outDir)
    : contractVersions(root)
        .map((version) => `generated/${version.name}`)
        .join(', ');
  console.log(check ? `generated/ is up to date (${versions}).` : `generated/ written (${versions}): ${differing.length} file(s) changed.`);
  return 0;
}
