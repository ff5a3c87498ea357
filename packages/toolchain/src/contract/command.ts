/**
 * Contract fuzzer for any running instance of the API, one major version of
 * the contract at a time:
 *
 *   npm run contract -- --base-url http://127.0.0.1:3000 --version v2 --key $KEY [--seed N] [--max-examples N]
 *                       [--operation ID]... [--rate N] [--time-limit SECONDS] [--report FILE.json]
 *   npm run contract -- --base-url http://127.0.0.1:3000/v1 --key $KEY ...   (the version from the URL's /vN)
 *   npm run contract -- --base-url http://127.0.0.1:3000 --spec openapi/v2/openapi.yaml --key $KEY ...
 *
 * The document is openapi/vN/openapi.yaml of `--version vN` (or `--spec FILE`,
 * or the version the base URL ends in); the operations are requested under
 * its base path (its `servers`), added to a --base-url that has no path.
 * The key may also come from the environment (CONTRACT_API_KEY), and an
 * access token for oauth2 / openIdConnect operations from --token or
 * CONTRACT_ACCESS_TOKEN, which keeps them out of process lists. Credentials go
 * as each operation's security schemes say; a document split across files is
 * bundled first. Exit code 0 when nothing failed, 1 otherwise (or when
 * the run stopped early), 2 on a usage error. The last line is `N passed, M failed`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { contractVersions } from '@spec-first/engine/testing';
import { formatReport, writeJsonReport } from './report';
import { runContract, type ContractOptions } from './runner';
import { loadBundledContract, resolveBaseUrl } from './spec';

const USAGE = `usage: npm run contract -- --base-url <server URL, or ending in /vN> [--version vN | --spec FILE] --key <API key> [--token <access token>] [--seed N]
                            [--max-examples N] [--operation <operationId>]... [--rate N] [--time-limit SECONDS] [--report FILE.json]`;

/** The document to fuzz: `--spec`, else `--version`'s, else the version the base URL's path ends in. */
function documentFor(root: string, spec: string | undefined, version: string | undefined, baseUrl: string): string {
  const versions = contractVersions(root);
  const names = versions.map((candidate) => candidate.name).join(', ');
  if (spec !== undefined && version !== undefined) throw new Error('--spec and --version both name a document: give one of them');
  if (spec !== undefined) return path.resolve(process.env['INIT_CWD'] ?? process.cwd(), spec);
  const wanted = version !== undefined ? (/^\d+$/.test(version) ? `v${version}` : version) : /\/(v\d+)\/*$/.exec(new URL(baseUrl).pathname)?.[1];
  if (wanted === undefined) throw new Error(`say which version of the contract to check: --version vN (the versions: ${names}), or a --base-url ending in /vN`);
  const found = versions.find((candidate) => candidate.name === wanted);
  if (!found)
    throw new Error(
      `${version !== undefined ? `--version ${version}` : `--base-url ends in /${wanted}`}: no such version of the contract (the versions: ${names}); pass --version vN or --spec FILE`,
    );
  return found.document;
}

function positive(value: string | undefined, flag: string, allowZero = false): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || (!allowZero && number <= 0) || !Number.isFinite(number))
    throw new Error(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} number`);
  return number;
}

function integer(value: number | undefined, flag: string): number | undefined {
  if (value !== undefined && !Number.isSafeInteger(value)) throw new Error(`${flag} must be an integer`);
  return value;
}

/**
 * `npm run contract`: fuzzes a running server with the project's contract;
 * resolves to the exit code (0 passed, 1 failed or stopped, 2 usage).
 *
 * @example process.exitCode = await runContractCommand(['--base-url', 'http://127.0.0.1:3000/v1', '--key', key], process.cwd());
 */
export async function runContractCommand(args: readonly string[], root: string, largerKey?: string): Promise<number> {
  let options: ContractOptions & { rate: number; timeLimitSeconds: number; report: string | undefined };
  try {
    const { values } = parseArgs({
      args: [...args],
      options: {
        'base-url': { type: 'string' },
        key: { type: 'string' },
        token: { type: 'string' },
        seed: { type: 'string' },
        'max-examples': { type: 'string' },
        operation: { type: 'string', multiple: true },
        rate: { type: 'string' },
        'time-limit': { type: 'string' },
        report: { type: 'string' },
        spec: { type: 'string' },
        version: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    const baseUrl = values['base-url'];
    const key = values.key ?? process.env['CONTRACT_API_KEY'];
    if (!baseUrl || !/^https?:\/\//.test(baseUrl)) throw new Error('--base-url http(s)://host[:port][/vN] is required');
    if (!key) throw new Error('--key (or CONTRACT_API_KEY) is required');
    const seed = integer(positive(values.seed, '--seed', true), '--seed');
    const specFile = documentFor(root, values.spec, values.version, baseUrl);
    // A version of openapi/ is served under /vN (its folder); a --spec file under its servers' path.
    const version =
      values.spec === undefined
        ? values.version !== undefined
          ? /^\d+$/.test(values.version)
            ? `v${values.version}`
            : values.version
          : /\/(v\d+)\/*$/.exec(new URL(baseUrl).pathname)?.[1]
        : undefined;
    const contract = await loadBundledContract(specFile, version && `/${version}`);
    const token = values.token ?? process.env['CONTRACT_ACCESS_TOKEN'];
    options = {
      baseUrl: resolveBaseUrl(baseUrl, contract.basePath),
      key,
      specFile,
      contract,
      ...(token && { token }),
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

  console.log(
    `contract: ${options.baseUrl} (${path.relative(process.cwd(), options.specFile) || options.specFile}), at most ${options.rate} requests/s, time limit ${options.timeLimitSeconds} s`,
  );
  const result = await runContract({ ...options, ...(largerKey !== undefined && { largerKey }), log: (line) => console.log(line) });
  if (options.report) writeJsonReport(options.report, result);
  for (const line of formatReport(result)) console.log(line);
  return result.failed > 0 || result.stoppedReason ? 1 : 0;
}
