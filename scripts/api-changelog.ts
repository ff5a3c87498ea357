/**
 * `npm run api:changelog -- [--version vN | --spec <file>] [--check]`
 *
 * Writes openapi/vN/CHANGELOG.md (next to the contract) from the release record
 * in openapi/vN/releases, for every major version (or the one named): one
 * entry per release, newest first, its changes against the release before it
 * as api:diff classifies them. `--check` writes nothing and exits 1 when a
 * file is not what would be written (CI).
 * The work is in scripts/lib/contract-diff/api-changelog-command.ts.
 */
import { emit } from './lib/contract-diff/command-io';
import { runApiChangelog } from './lib/contract-diff/api-changelog-command';

runApiChangelog(process.argv.slice(2), process.env['INIT_CWD'] ?? process.cwd()).then(emit);
