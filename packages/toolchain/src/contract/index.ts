/** The contract fuzzer as a module: `runContract` runs it, `formatReport` prints it. */
export { runContract, type ContractOptions, type ContractResult, type CaseResult } from './runner';
export { formatReport, writeJsonReport } from './report';
export type { CheckName, CheckFailure } from './checks';
