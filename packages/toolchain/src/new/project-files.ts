import type { CredentialPlacement } from '@spec-first/engine/testing';

/** What a new project's package.json and README are written from. */
export interface ProjectFacts {
  readonly name: string;
  readonly title: string;
  /** The file the document came from (its name only). */
  readonly source: string;
  /** The document in the project: `openapi/v1/openapi.yaml`. */
  readonly document: string;
  readonly version: string;
  readonly openapi: string;
  readonly schemes: ReadonlyArray<{ name: string; type: string; placement: CredentialPlacement | undefined }>;
  /** What the README's first request calls, and the scheme its key goes by (none: it needs no key). */
  readonly firstOperation: { method: string; path: string; operationId: string; scheme: string | undefined; ready: boolean };
  /** The dependency specifications of the engine and the toolchain. */
  readonly dependencies: { engine: string; toolchain: string };
}

/**
 * The development dependencies of a new project: the versions this
 * repository itself builds and tests with (a test keeps them equal).
 */
export const DEV_DEPENDENCIES = {
  '@biomejs/biome': '2.6.8',
  '@swc/core': '^1.16.22',
  '@swc/jest': '^0.2.39',
  '@types/jest': '^30.0.0',
  '@types/node': '^24.19.2',
  jest: '^30.5.2',
  node: '24.21.0',
  tsx: '^4.23.15',
  typescript: '~5.9',
} as const;

/** A package name npm accepts, from a folder's name. */
const packageName = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '') || 'api';

export function packageJson(facts: ProjectFacts): object {
  return {
    name: packageName(facts.name),
    version: '0.1.0',
    private: true,
    description: `Serves ${facts.title} (${facts.document}) with @spec-first/engine: the document is the source of truth.`,
    engines: { node: '>=22.12.0' },
    scripts: {
      start: 'npm run build && node --enable-source-maps dist/src/server.js',
      build: 'tsc -p tsconfig.build.json',
      dev: "tsx watch --clear-screen=false --include './openapi/**' scripts/dev.ts",
      mock: 'npm run build && MOCK=true node --enable-source-maps dist/src/server.js',
      generate: 'spec-first generate',
      'check:generated': 'spec-first generate --check',
      scaffold: 'spec-first scaffold',
      typecheck: 'tsc -p tsconfig.json',
      keys: 'tsx scripts/keys.ts',
      contract: 'spec-first contract',
      'api:diff': 'spec-first api-diff',
      'api:release': 'spec-first api-release',
      'api:changelog': 'spec-first api-changelog',
      lint: 'biome ci .',
      format: 'biome check --write .',
      test: 'npm run typecheck && jest',
    },
    specFirst: { handlers: 'src/handlers' },
    allowScripts: { node: true, '@scarf/scarf': false, '@swc/core': false, '@parcel/watcher': false, esbuild: false },
    dependencies: { '@spec-first/engine': facts.dependencies.engine },
    devDependencies: { '@spec-first/toolchain': facts.dependencies.toolchain, ...DEV_DEPENDENCIES },
  };
}

/** How a client sends a key (or a token) for one scheme, as a curl argument. */
function curlArgument(placement: CredentialPlacement | undefined): string | undefined {
  if (!placement) return undefined;
  if (placement.in === 'authorization') {
    if (placement.holds === 'token') return '-H "Authorization: Bearer $TOKEN"';
    return placement.form === 'basic' ? '-u "$KEY:"' : '-H "Authorization: Bearer $KEY"';
  }
  if (placement.in === 'header') return `-H "${placement.name}: $KEY"`;
  if (placement.in === 'cookie') return `--cookie "${placement.name}=$KEY"`;
  return `(query) ?${placement.name}=$KEY`;
}

const schemeRow = (scheme: ProjectFacts['schemes'][number]): string => {
  const how = curlArgument(scheme.placement);
  const what =
    scheme.placement === undefined
      ? 'not served by the engine: its requirements answer 401 saying so'
      : scheme.placement.holds === 'token'
        ? 'an access token, verified with OAUTH2_JWKS_URL, OAUTH2_ISSUER and OAUTH2_AUDIENCE'
        : scheme.placement.in === 'authorization' && scheme.placement.form === 'basic'
          ? 'a key from `npm run keys -- create`, as the user name with an empty password'
          : 'a key from `npm run keys -- create`';
  return `| \`${scheme.name}\` | ${scheme.type} | ${what} | ${how ? `\`${how}\`` : ''} |`;
};

export function readme(facts: ProjectFacts): string {
  const { method, path, operationId, scheme, ready } = facts.firstOperation;
  const keyed = facts.schemes.find((candidate) => candidate.name === scheme);
  const keyArg = keyed ? curlArgument(keyed.placement) : undefined;
  const url = `http://127.0.0.1:3000/${facts.version}${path}`;
  const verb = method === 'GET' ? '' : `-X ${method} `;
  const first =
    keyed?.placement?.in === 'query' ? `curl -i ${verb}"${url}?${keyed.placement.name}=$KEY"` : `curl -i ${keyArg ? `${keyArg} ` : ''}${verb}${url}`;
  return `# ${facts.title}

A spec-first server for **${facts.title}** (OpenAPI ${facts.openapi}), made from \`${facts.source}\` by
\`spec-first new\`. The document, \`${facts.document}\`, is the single source of truth: routing,
security, validation (400 Error objects \`{code, message, status}\`), mocks and docs come from it,
and the handlers' types are generated from it.

## Two commands

\`\`\`sh
npm install && npm start    # serves every operation on http://127.0.0.1:3000/${facts.version}/… (PORT, HOST)
npm test                    # typecheck, then the contract test against the real server
\`\`\`

## A first session

\`\`\`sh
npm run keys -- create             # the last line is a new API key
KEY=<that key>
${first}   # ${operationId}: ${ready ? '501 not_implemented until its handler exists' : 'fill in what the document requires of it; then 501 not_implemented until its handler exists'}
npm run mock                       # the same server, answering the document's examples instead
npm run mock -- --stateful         # every operation answered from memory: a POST on /things, then GET /things/{id} finds it
open http://127.0.0.1:3000/docs    # the documentation; /openapi.json is the published document
\`\`\`

## Credentials

| scheme | type | what it takes | with curl |
|---|---|---|---|
${facts.schemes.length > 0 ? facts.schemes.map(schemeRow).join('\n') : '| (none) | | the document declares no security | |'}

Keys live in \`data/keys.jsonl\` (\`KEYS_FILE\`), stored as their SHA-256 only:
\`npm run keys -- create | list | revoke <id>\`. The key store is \`src/keys.ts\`: this project's own, to replace at will.

## Writing a handler

Each operation has a stub in \`src/handlers/<operationId>.ts\`. Replace it with a handler typed from
the document; a response the document does not declare fails \`npm run typecheck\`:

\`\`\`ts
import type { Handler } from './types';

export const ${operationId}: Handler<'${operationId}'> = async ({ params, query, body }, { caller }) => ({ status: 200, body: /* what the document declares */ });
\`\`\`

## When the document changes

| command | what it does |
|---|---|
| \`npm run generate\` | regenerates \`generated/\` (types and the operation table) from the document |
| \`npm run scaffold\` | a stub for each new operation; the registry in \`src/handlers/index.ts\` |
| \`npm run typecheck\` | every handler against the document's types |
| \`npm run dev\` | the server, restarted on every save of \`src/\` or \`openapi/\`, each time after regenerating \`generated/\` and scaffolding new operations |
| \`npm run mock\` | the server answering the document's examples for every stub |
| \`npm run mock -- --stateful\` | the server answering every operation from memory: collection and item paths (\`/things\`, \`/things/{id}\`) keep what clients create until it stops; other operations answer their examples |
| \`npm run contract -- --base-url http://127.0.0.1:3000 --version ${facts.version} --key $KEY\` | fuzzes a running server against the document |
| \`npm run api:diff\` | the document against its last release (\`npm run api:release -- --version ${facts.version}\` records one): exit 1 on a breaking change |
| \`npm run lint\` | Biome |

## Map

| path | what |
|---|---|
| \`${facts.document}\` | the document (split files beside it) |
| \`generated/\` | written by \`npm run generate\`; never edited by hand |
| \`src/handlers/\` | one file per operation, the registry, the handler types and context |
| \`src/app.ts\` | the composition root: documents, handlers, keys, engine |
| \`src/server.ts\`, \`src/settings.ts\` | listening, shutdown, the environment (PORT, HOST, KEYS_FILE, MOCK, OAUTH2_*) and \`--stateful\` |
| \`src/keys.ts\`, \`scripts/keys.ts\` | the key store and its command |
| \`scripts/dev.ts\` | \`npm run dev\` |
| \`test/contract.test.ts\` | the contract test |
| \`vendor/\` | the engine and toolchain packages, when they were not installed from a registry |
`;
}
