/**
 * Building blocks of the benchmarks, one concern per file: processes (servers
 * in child processes, CPU pinning, CPU time), memory (RSS, peaks), project
 * (the project's server and the baselines), peers (the same API on other
 * stacks, each with its own packages), load (scenarios, one bounded load),
 * statistics.
 */
export * from './processes';
export * from './memory';
export * from './project';
export * from './peers';
export * from './load';
export * from './statistics';
