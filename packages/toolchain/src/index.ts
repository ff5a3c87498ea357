/**
 * The toolchain of a spec-first project, as functions (the `spec-first`
 * command runs each): a new project from a document, code generation,
 * handler stubs, the contract fuzzer, and the breaking-change gate with its
 * release records and changelogs. Each works on a project laid out as
 * `openapi/vN/openapi.(yaml|json)`.
 *
 * @example
 * import { runContract, loadBundledContract } from '@spec-first/toolchain';
 * const contract = await loadBundledContract('openapi/v1/openapi.yaml', '/v1');
 * const { failed } = await runContract({ baseUrl: 'http://127.0.0.1:3000/v1', key, specFile: 'openapi/v1/openapi.yaml', contract });
 */
export { runCli } from './cli';
export { createProject, type CreatedProject } from './new/create-project';
export { renderAll, renderGenerated, renderVersions, writeGenerated } from './generate/render';
export { runGenerate } from './generate/command';
export { orphanHandlers, projectVersions, runScaffold, scaffold, type ScaffoldVersion } from './scaffold';
export { applyDocuments, type Applied } from './apply-documents';
export { runContract, type CaseResult, type ContractOptions, type ContractResult } from './contract/runner';
export { formatReport, writeJsonReport } from './contract/report';
export { checkResponse, schemaErrors, type CheckFailure, type CheckName } from './contract/checks';
export { casesFor } from './contract/cases';
export { basePathOf, contractOf, loadBundledContract, loadContract, resolveBaseUrl, type Contract, type Operation } from './contract/spec';
export { runContractCommand } from './contract/command';
export { runApiDiff } from './api-diff/api-diff-command';
export { runApiRelease } from './api-diff/api-release-command';
export { runApiChangelog } from './api-diff/api-changelog-command';
export { diffContracts } from './api-diff/diff-contracts';
export type { CommandOutcome } from './api-diff/command-io';
