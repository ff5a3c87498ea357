#!/usr/bin/env node
/**
 * `spec-first <command>`: the toolchain of a project laid out as
 * `openapi/vN/openapi.(yaml|json)`, run from its root (npm runs scripts there).
 *
 *   spec-first new <document> <dir>   a project serving that document
 *   spec-first generate [--check]     generated/ from the documents
 *   spec-first scaffold               a stub per operation without a handler, and the registries
 *   spec-first contract ...           fuzzes a running server against its document
 *   spec-first api-diff ...           the breaking-change gate; api-release and api-changelog record releases
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runApiChangelog } from './api-diff/api-changelog-command';
import { runApiDiff } from './api-diff/api-diff-command';
import { runApiRelease } from './api-diff/api-release-command';
import { emit } from './api-diff/command-io';
import { runContractCommand } from './contract/command';
import { runGenerate } from './generate/command';
import { createProject } from './new/create-project';
import { runScaffold } from './scaffold';

const USAGE = `usage: spec-first <command>
  new <document> <dir>    write a project that serves <document> (OpenAPI 3.0, 3.1 or 3.2; YAML or JSON; split files too)
  generate [--check]      generated/ from openapi/vN/ (--check: exit 1 when stale)
  scaffold                a stub per operation without a handler, and the handler registries
  contract --base-url URL --key KEY [...]   fuzz a running server against its document
  api-diff [...]          the working documents against their last release (exit 1 on an unannounced breaking change)
  api-release [...]       record a release of a document (openapi/vN/releases/)
  api-changelog [--check] openapi/vN/CHANGELOG.md from the release records`;

/** Where the user typed the command: npm sets INIT_CWD, as it runs scripts in the project's root. */
const typedIn = (): string => process.env['INIT_CWD'] ?? process.cwd();

/**
 * What a project says of itself in package.json's `specFirst`: its handlers'
 * folder (`src/handlers` by default), and the command that makes a key with
 * larger limits (named when a contract run meets its limits).
 */
function projectSettings(root: string): { handlers: string; largerKey: string | undefined } {
  let settings: { handlers?: string; largerKey?: string } = {};
  try {
    settings = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { specFirst?: typeof settings }).specFirst ?? {};
  } catch {
    // No package.json: the defaults.
  }
  return { handlers: settings.handlers ?? 'src/handlers', largerKey: settings.largerKey };
}

/**
 * Runs one command; resolves to its exit code (2: usage).
 *
 * @example process.exitCode = await runCli(process.argv.slice(2), process.cwd());
 */
export async function runCli(argv: readonly string[], root: string): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'new':
      return createProject(args, typedIn());
    case 'generate':
      return runGenerate(args, root);
    case 'scaffold':
      return runScaffold(root, projectSettings(root).handlers);
    case 'contract':
      return runContractCommand(args, root, projectSettings(root).largerKey);
    case 'api-diff':
      return emit(await runApiDiff(args, typedIn(), root));
    case 'api-release':
      return emit(await runApiRelease(args, typedIn(), root));
    case 'api-changelog':
      return emit(await runApiChangelog(args, typedIn(), root));
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`spec-first: no command ${command}\n${USAGE}`);
      return 2;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), process.cwd()).then(
    (code) => {
      process.exitCode = code;
    },
    (error: Error) => {
      console.error(`spec-first: ${error.message}`);
      process.exitCode = 2;
    },
  );
}
