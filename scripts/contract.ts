/**
 * Contract fuzzer for any running instance of the API:
 *
 *   npm run contract -- --base-url http://127.0.0.1:3000/v1 --key $KEY [--seed N] [--max-examples N]
 *                       [--operation ID]... [--rate N] [--time-limit SECONDS] [--report FILE.json] [--spec FILE]
 *
 * The key may also come from the environment (CONTRACT_API_KEY), which keeps it
 * out of process lists. Exit code 0 when nothing failed, 1 otherwise (or when
 * the run stopped early), 2 on a usage error. The last line is `N passed, M failed`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport, runContract, writeJsonReport } from './contract/index';

const USAGE = `usage: npm run contract -- --base-url <URL ending in /v1> --key <API key> [--seed N] [--max-examples N]
                            [--operation <operationId>]... [--rate N] [--time-limit SECONDS] [--report FILE.json] [--spec FILE]`;

const DEFAULT_SPEC = path.join(__dirname, '..', 'openapi', 'v1', 'openapi.yaml');

function positive(value: string | undefined, flag: string, allowZero = false): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || (!allowZero && number <= 0) || !Number.isFinite(number)) throw new Error(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} number`);
  return number;
}

function integer(value: number | undefined, flag: string): number | undefined {
  if (value !== undefined && !Number.isSafeInteger(value)) throw new Error(`${flag} must be an integer`);
  return value;
}

async function main(): Promise<number> {
  let options;
  try {
    const { values } = parseArgs({
      options: {
        'base-url': { type: 'string' },
        key: { type: 'string' },
        seed: { type: 'string' },
        'max-examples': { type: 'string' },
        operation: { type: 'string', multiple: true },
        rate: { type: 'string' },
        'time-limit': { type: 'string' },
        report: { type: 'string' },
        spec: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    const baseUrl = values['base-url'];
    const key = values.key ?? process.env['CONTRACT_API_KEY'];
    if (!baseUrl || !/^https?:\/\//.test(baseUrl)) throw new Error('--base-url http(s)://host[:port]/v1 is required');
    if (!key) throw new Error('--key (or CONTRACT_API_KEY) is required');
    const seed = integer(positive(values.seed, '--seed', true), '--seed');
    options = {
      baseUrl,
      key,
      specFile: values.spec ?? DEFAULT_SPEC,
      ...(seed !== undefined && { seed }),
      maxExamples: integer(positive(values['max-examples'], '--max-examples', true), '--max-examples') ?? 20,
      operations: (values.operation ?? []).flatMap((id) => id.split(',')).filter(Boolean),
      rate: positive(values.rate, '--rate') ?? 20,
      timeLimitSeconds: positive(values['time-limit'], '--time-limit') ?? 300,
      report: values.report,
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }

  console.log(`contract: ${options.baseUrl} (${path.relative(process.cwd(), options.specFile) || options.specFile}), at most ${options.rate} requests/s, time limit ${options.timeLimitSeconds} s`);
  const result = await runContract({ ...options, log: (line) => console.log(line) });
  if (options.report) writeJsonReport(options.report, result);
  for (const line of formatReport(result)) console.log(line);
  return result.failed > 0 || result.stoppedReason ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: Error) => {
    console.error(`contract: ${error.message}`);
    process.exitCode = 2;
  },
);
