// The project's compiled server (dist/, as `npm start` builds it) with one
// more version beside openapi/'s: v3, the repository's OpenAPI 3.2 library
// fixture, whose importBooks reads its JSON Lines body item by item. The
// store declares no request body of items, so this is how bench/hostile.ts
// sends trickled request streams (the security review's setup). BENCH_ROOT
// names the checkout to serve (another commit, for figures before a change).
const path = require('node:path');

const root = path.resolve(process.env.BENCH_ROOT ?? process.cwd());
const load = (module) => require(path.join(root, 'dist/src', module));

async function main() {
  const { loadConfig } = load('config');
  const { compose } = load('compose');
  const { serve } = load('runtime/serve');
  const { loadContract, contractVersionsIn } = load('engine/contract');
  const { registries } = load('service/handlers');
  const config = loadConfig(process.env);
  const versions = await Promise.all(
    contractVersionsIn(path.join(root, 'openapi')).map(async (version) => ({
      name: version.name,
      contract: await loadContract(version.document),
      handlers: registries[version.name],
    })),
  );
  const importBooks = async (request) => {
    let imported = 0;
    for await (const _book of request.body) imported++;
    return { status: 200, body: { imported } };
  };
  const library = await loadContract(path.join(root, 'test/fixtures/openapi-3.2/library-3.2.yaml'));
  versions.push({ name: `v${versions.length + 1}`, contract: library, handlers: { importBooks } });
  const service = await compose(config, { versions });
  const serving = await serve(service);
  const stop = () => void serving.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
