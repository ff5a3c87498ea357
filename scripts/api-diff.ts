/**
 * `npm run api:diff -- [--version vN | --spec <file>] [--base <git ref or file>] [--format text|json|markdown] [--today YYYY-MM-DD]`
 *
 * With no --version and no --spec: every major version of the contract
 * (openapi/vN/openapi.yaml) against its own newest release (openapi/vN/releases),
 * or against --base <git ref>, under a header per version; exit 1 when any fails.
 * With one: that document against the base (default: the newest release next
 * to it), e.g. across versions:
 *   npm run api:diff -- --base openapi/v1/openapi.yaml --spec openapi/v2/openapi.yaml
 * Prints every change with its class. Exit 1 when a change is breaking and
 * info.version's major was not raised (the removal of an operation whose
 * x-sunset date has come is announced; before that date it is refused by
 * name), 2 on bad input. `--today` (default $API_DIFF_TODAY, else the real
 * date) is the day sunsets are judged by.
 * The work is in scripts/lib/contract-diff/.
 */
import { emit } from './lib/contract-diff/command-io';
import { runApiDiff } from './lib/contract-diff/api-diff-command';

// npm runs scripts in the package root; INIT_CWD is where the user typed the command.
runApiDiff(process.argv.slice(2), process.env['INIT_CWD'] ?? process.cwd()).then(emit);
