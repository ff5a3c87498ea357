/**
 * Which document a contract command works on: there is one per major version
 * (`openapi/vN/openapi.yaml`, each with its own releases and changelog).
 * `--spec FILE` names any file, `--version vN` (or `N`) one of the project's
 * versions; with neither, the commands that can (api:diff, api:changelog)
 * work on every version, and api:release on the only one (or asks which).
 */
import path from 'node:path';
import { contractVersions } from '@spec-first/engine/testing';
import { displayPath } from './load-contract';

/** One document to work on: the version's name when it is one of the project's, and its path. */
export interface ChosenDocument {
  version?: string;
  specPath: string;
}

/** `--spec` / `--version` as parsed. */
export interface ChoiceFlags {
  spec?: string | undefined;
  version?: string | undefined;
}

export type Choice = { single: ChosenDocument } | { every: ChosenDocument[] } | { error: string };

const names = (root: string): string => {
  const versions = contractVersions(root);
  return versions.length === 0 ? 'none' : versions.map((version) => version.name).join(', ');
};

/**
 * @example
 * chooseDocuments({ version: 'v2' }, process.cwd());            // { single: { version: 'v2', specPath: '/…/openapi/v2/openapi.yaml' } }
 * chooseDocuments({ spec: 'openapi/v1/openapi.yaml' }, cwd);   // { single: { specPath: '/…/openapi/v1/openapi.yaml' } }
 * chooseDocuments({}, cwd);                                     // { every: [v1, v2] }
 */
export function chooseDocuments(flags: ChoiceFlags, cwd: string, root: string = cwd): Choice {
  if (flags.spec !== undefined && flags.version !== undefined) return { error: '--spec and --version both name a document: give one of them' };
  if (flags.spec !== undefined) return { single: { specPath: path.resolve(cwd, flags.spec) } };
  const versions = contractVersions(root);
  if (flags.version !== undefined) {
    const wanted = /^\d+$/.test(flags.version) ? `v${flags.version}` : flags.version;
    const found = versions.find((version) => version.name === wanted);
    if (!found) return { error: `--version ${flags.version}: no such version of the contract (the versions are ${names(root)}: openapi/vN/openapi.yaml)` };
    return { single: { version: found.name, specPath: found.document } };
  }
  if (versions.length === 0) return { error: `no openapi/vN/openapi.yaml under ${displayPath(cwd, path.join(root, 'openapi'))}: pass --spec <file>` };
  return { every: versions.map((version) => ({ version: version.name, specPath: version.document })) };
}

/** The sentence for a command that needs one document when there are several. */
export function whichVersionMessage(command: string, documents: readonly ChosenDocument[], cwd: string): string {
  const last = documents.at(-1)!;
  return (
    `the contract has ${documents.length} major versions (${documents.map((document) => `${document.version} ${displayPath(cwd, document.specPath)}`).join(', ')}): ` +
    `say which one, e.g. npm run ${command} -- --version ${last.version} (or --spec ${displayPath(cwd, last.specPath)})`
  );
}
