/**
 * The type checker of `npm run dev`: TypeScript's own watch mode
 * (`ts.createWatchProgram`, what `tsc --watch` runs: file-system events, an
 * incremental builder that re-checks only what a change affects) on
 * tsconfig.json with `noEmit`, in a worker thread: it uses the other core
 * and dies with the dev process, so it can never be left behind. Its
 * `.tsbuildinfo` (under dist/) makes the next session's first check quick.
 *
 * Errors are posted file by file as the builder checks the affected files
 * (a contract change affects most of the project; the handlers come early),
 * then one message ends the check with every error and how long it took.
 */
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import ts from 'typescript';

export interface TypeCheckError {
  /** Relative to the project; undefined for a global error (tsconfig). */
  file?: string;
  line?: number;
  col?: number;
  code: number;
  message: string;
}

export type CheckerMessage =
  | { type: 'checking' }
  /** Errors of files just checked, while the check goes on. */
  | { type: 'found'; errors: TypeCheckError[] }
  /** The check is over: all errors of the project. */
  | { type: 'checked'; errors: TypeCheckError[]; ms: number; files: number };

export type CheckerControl = 'hold' | 'release';

const { root, project, buildInfo } = workerData as { root: string; project: string; buildInfo: string };
const post = (message: CheckerMessage): void => parentPort!.postMessage(message);

// The server's (re)start comes first: while the dev loop (re)starts it, a
// check due to start waits. TypeScript still records every file event, and
// schedules its update through the host's setTimeout, which runs it only
// once released.
let held = false;
const due = new Set<NodeJS.Timeout>();
const callbacks = new Map<NodeJS.Timeout, () => void>();
parentPort!.on('message', (control: CheckerControl) => {
  held = control === 'hold';
  if (held) return;
  for (const timer of [...due]) {
    due.delete(timer);
    const callback = callbacks.get(timer);
    callbacks.delete(timer);
    callback?.();
  }
});

let started = performance.now();

const isError = (diagnostic: ts.Diagnostic): boolean => diagnostic.category === ts.DiagnosticCategory.Error;

const toError = (diagnostic: ts.Diagnostic): TypeCheckError => {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return { code: diagnostic.code, message };
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const file = path.relative(root, diagnostic.file.fileName).split(path.sep).join('/');
  return { file, line: line + 1, col: character + 1, code: diagnostic.code, message };
};

// Watch status codes: 6031 starting, 6032 file change detected.
const STARTING = new Set([6031, 6032]);

const host = ts.createWatchCompilerHost(
  path.join(root, project),
  { noEmit: true, incremental: true, tsBuildInfoFile: buildInfo, pretty: false },
  ts.sys,
  ts.createEmitAndSemanticDiagnosticsBuilderProgram,
  (diagnostic) => {
    // tsconfig problems found while (re)reading it
    if (isError(diagnostic)) post({ type: 'found', errors: [toError(diagnostic)] });
  },
  (status) => {
    if (STARTING.has(status.code)) {
      started = performance.now();
      post({ type: 'checking' });
    }
  },
);
host.setTimeout = (callback, ms, ...args) => {
  const timer: NodeJS.Timeout = setTimeout(() => {
    if (held) return void due.add(timer);
    callbacks.delete(timer);
    callback(...args);
  }, ms);
  callbacks.set(timer, () => callback(...args));
  return timer;
};
host.clearTimeout = (timer) => {
  clearTimeout(timer as NodeJS.Timeout);
  due.delete(timer as NodeJS.Timeout);
  callbacks.delete(timer as NodeJS.Timeout);
};

/**
 * Instead of tsc's "check everything, then print": the affected files one
 * by one, their errors posted at once; then the errors of the whole project
 * (the unaffected files' are cached), and the build info written.
 */
host.afterProgramCreate = (builder) => {
  const early = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
  ].filter(isError);
  if (early.length > 0) post({ type: 'found', errors: early.map(toError) });
  for (;;) {
    const next = builder.getSemanticDiagnosticsOfNextAffectedFile();
    if (!next) break;
    const found = next.result.filter(isError);
    if (found.length > 0) post({ type: 'found', errors: found.map(toError) });
  }
  const all = [...early, ...builder.getSemanticDiagnostics().filter(isError)];
  builder.emit(); // with noEmit: only the .tsbuildinfo
  post({ type: 'checked', errors: all.map(toError), ms: performance.now() - started, files: projectFiles(builder.getProgram()) });
};

/** The project's own files in the program (not the libraries' declarations). */
function projectFiles(program: ts.Program): number {
  return program.getSourceFiles().filter((file) => !program.isSourceFileDefaultLibrary(file) && !program.isSourceFileFromExternalLibrary(file)).length;
}

ts.createWatchProgram(host);
