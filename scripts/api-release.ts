/**
 * `npm run api:release -- --version vN [--today YYYY-MM-DD]` (or `--spec <file>`)
 *
 * Records openapi/vN/openapi.yaml as released: writes openapi/vN/releases/<info.version>.yaml,
 * its date in openapi/vN/releases/index.json, and regenerates openapi/vN/CHANGELOG.md
 * (commit them). With several major versions, --version (or --spec) is required.
 * Refuses an existing version, a version not above the last release, and an
 * unannounced breaking change against the last release.
 * --today (default $API_DIFF_TODAY, else the real date, UTC) is the release
 * date and the day sunsets are judged by.
 * The work is in scripts/lib/contract-diff/api-release-command.ts.
 */
import { emit } from './lib/contract-diff/command-io';
import { runApiRelease } from './lib/contract-diff/api-release-command';

runApiRelease(process.argv.slice(2), process.env['INIT_CWD'] ?? process.cwd()).then(emit);
