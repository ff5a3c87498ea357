import { documentsIn, loadDocument, type OpenApiDocument } from '@spec-first/engine';
import { OPENAPI_DIR } from './project';
import { registries } from './service/handlers';
import type { HandlerRegistry, Version } from './service/handlers';

/** One major version to serve: its name (`v1`, served under `/v1`), its bundled document and its handlers. */
export interface ServedVersion {
  name: string;
  contract: OpenApiDocument;
  handlers: Readonly<Record<string, unknown>>;
  /** Where the document was read from, as messages name it (`openapi/v1/openapi.yaml`). */
  source?: string;
}

/**
 * A registry for every version of the contract: a version added to openapi/
 * without one (npm run scaffold writes it) is a compile error here, naming
 * the version and the operations it needs.
 */
const everyVersion: { readonly [V in Version]: HandlerRegistry<V> } = registries;

/**
 * The versions of openapi/ (or `contractDir`), each bundled, with
 * src/service/handlers' registries; the first one's document and handlers
 * replaced by `first`'s (tests).
 *
 * @example const versions = await servedVersions(undefined); versions.map((version) => version.name) // ['v1', 'v2']
 */
export async function servedVersions(
  contractDir: string | undefined,
  first: { contract?: OpenApiDocument; handlers?: Readonly<Record<string, unknown>> } = {},
): Promise<ServedVersion[]> {
  return Promise.all(
    documentsIn(contractDir ?? OPENAPI_DIR).map(async (version, index) => {
      const registry = (everyVersion as Record<string, Readonly<Record<string, unknown>> | undefined>)[version.name];
      if (!registry) throw new Error(`openapi/${version.name}/openapi.yaml has no handler registry in src/service/handlers/index.ts: run npm run scaffold`);
      return {
        name: version.name,
        contract: (index === 0 && first.contract) || (await loadDocument(version.document)),
        handlers: (index === 0 && first.handlers) || registry,
        source: `openapi/${version.name}/openapi.yaml`,
      };
    }),
  );
}
