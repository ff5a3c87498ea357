/**
 * Checks the contract documents on every save, fast, and says what is wrong
 * with file, line and rule:
 *
 * 1. YAML syntax, with the parser the server itself uses (`yaml`), in process;
 * 2. `redocly lint` with the project's rules (openapi/redocly.yaml), the same
 *    as `npm run lint:api`: one process for every document (about 0.4 s).
 *
 * A problem that makes the contract unusable (a syntax error, an invalid
 * document, a `$ref` to nothing, a missing or duplicated operationId, an
 * example its schema refuses: `npm run mock` serves those) blocks it: the
 * server keeps the last good contract. The others (summaries, 4xx responses,
 * ...) are reported and do not block: `npm run lint:api` fails on them in CI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';

export interface Problem {
  /** Relative to the project, e.g. `openapi/v1/openapi.yaml`. */
  file: string;
  line?: number;
  col?: number;
  rule: string;
  message: string;
  /** Whether it keeps the document from being served. */
  blocking: boolean;
  /** More lines (a code frame). */
  details?: string[];
}

/** Rules whose problems make a document unusable for the server, the generator or the mock. */
export const BLOCKING_RULES: ReadonlySet<string> = new Set([
  'struct',
  'spec',
  'no-unresolved-refs',
  'operation-operationId',
  'operation-operationId-unique',
  'operation-parameters-unique',
  'path-parameters-defined',
  'path-declaration-must-exist',
  'no-identical-paths',
  'security-defined',
  'no-invalid-media-type-examples',
  'no-invalid-schema-examples',
  'no-invalid-parameter-examples',
]);

/** The first syntax error of one document (the next ones are mostly its echoes), with the server's own YAML parser. */
export function yamlProblems(file: string, text: string): Problem[] {
  const { errors } = parseDocument(text, { prettyErrors: true });
  const more = errors.length > 1 ? ` (then ${errors.length - 1} more error${errors.length > 2 ? 's' : ''} after it)` : '';
  return errors.slice(0, 1).map((error) => {
    const [first = error.message, ...frame] = error.message.split('\n');
    const position = error.linePos?.[0];
    return {
      file,
      ...(position ? { line: position.line, col: position.col } : {}),
      rule: 'yaml-syntax',
      message: `${first.replace(/ at line \d+, column \d+:?$/, '')}${more}`,
      blocking: true,
      details: frame.filter((line) => line.trim() !== ''),
    };
  });
}

interface RedoclyProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location?: Array<{ source?: { ref?: string }; start?: { line: number; col: number } }>;
}

const REDOCLY = require.resolve('@redocly/cli/bin/cli.js');

/** The lint runs in flight, so stopping the dev loop stops them too. */
const running = new Set<ChildProcess>();
export function stopLints(): void {
  for (const child of running) child.kill('SIGTERM');
}

/**
 * `redocly lint` on `files` (relative to `root`), with openapi/redocly.yaml
 * when there is one. Resolves with its problems, blocking or not.
 */
export function lintDocuments(root: string, files: readonly string[]): Promise<Problem[]> {
  if (files.length === 0) return Promise.resolve([]);
  const config = path.join('openapi', 'redocly.yaml');
  const args = [REDOCLY, 'lint', ...files, '--format=json', ...(existsSync(path.join(root, config)) ? ['--config', config] : [])];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      // No telemetry call (it would add a network round trip to every save) and no update notice.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code, signal) => {
      running.delete(child);
      let problems: RedoclyProblem[];
      try {
        problems = parseConcatenatedJson(stdout).flatMap((report) => (report as { problems: RedoclyProblem[] }).problems);
      } catch {
        const why = signal ? `stopped by ${signal}` : stderr.trim().split('\n').slice(-3).join(' ') || `exit code ${code}`;
        resolve([{ file: files.join(', '), rule: 'lint', message: `redocly lint did not report: ${why}`, blocking: true }]);
        return;
      }
      resolve(
        problems.map((problem) => {
          const where = problem.location?.[0];
          return {
            file: where?.source?.ref ? path.relative(root, path.resolve(root, where.source.ref)).split(path.sep).join('/') : files.join(', '),
            ...(where?.start ? { line: where.start.line, col: where.start.col } : {}),
            rule: problem.ruleId,
            message: problem.message,
            blocking: BLOCKING_RULES.has(problem.ruleId),
          };
        }),
      );
    });
  });
}

/** `redocly lint --format=json` prints one JSON object per document, one after the other. */
export function parseConcatenatedJson(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{') {
      if (depth++ === 0) start = i;
    } else if (char === '}' && --depth === 0) {
      values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  if (values.length === 0 || depth !== 0) throw new Error('no complete JSON report');
  return values;
}

/** Every problem of the documents: YAML first (a document that does not parse is not linted), then the lint. */
export async function checkDocuments(root: string, files: readonly string[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const parsed: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(path.join(root, file), 'utf8');
    } catch (error) {
      problems.push({ file, rule: 'read', message: (error as Error).message, blocking: true });
      continue;
    }
    const syntax = yamlProblems(file, text);
    problems.push(...syntax);
    if (syntax.length === 0) parsed.push(file);
  }
  problems.push(...(await lintDocuments(root, parsed)));
  return problems;
}

/** `openapi/v1/openapi.yaml:238:11 no-unresolved-refs: Can't resolve $ref`, then its details. */
export function formatProblem(problem: Problem): string[] {
  const where = problem.line === undefined ? problem.file : `${problem.file}:${problem.line}:${problem.col ?? 1}`;
  const kind = problem.blocking ? 'error' : 'lint';
  return [`${where}  ${kind}  ${problem.rule}: ${problem.message}`, ...(problem.details ?? []).map((line) => `  ${line}`)];
}
