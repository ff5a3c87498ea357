/**
 * The store's toolchain scripts (`npm run generate`, `scaffold`, `contract`,
 * `api:diff`, `api:release`, `api:changelog`, `new`): the toolchain package's
 * commands, run on this project's root.
 */
import { runCli } from '@spec-first/toolchain';
import { PROJECT_ROOT } from '../src/project';

runCli(process.argv.slice(2), PROJECT_ROOT).then(
  (code) => {
    process.exitCode = code;
  },
  (error: Error) => {
    console.error(error.message);
    process.exitCode = 2;
  },
);
