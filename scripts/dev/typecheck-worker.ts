/**
 * The type checker of `npm run dev`: TypeScript's own watch mode
 * (`ts.createWatchProgram`, what `tsc --watch` runs: file-system events, an
 * incremental builder that re-checks only what a change affects) on
 * tsconfig.json with `noEmit`, in a worker thread: it uses the other core
 * and dies with the dev process, so it can never be left behind. Its
 * `.tsbuildinfo` (under dist/) makes the next session's first check quick.
 * It posts one message per check: the errors, and how long it took.
 */
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import ts from 'typescript';

export interface TypeError {
  /** Relative to the project; undefined for a global error (tsconfig). */
  file?: string;
  line?: number;
  col?: number;
  code: number;
  message: string;
}

export type CheckerMessage = { type: 'checking' } | { type: 'checked'; errors: TypeError[]; ms: number; files: number };

export type CheckerControl = 'hold' | 'release';

const { root, project, buildInfo } = workerData as { root: string; project: string; buildInfo: string };
const post = (message: CheckerMessage): void => parentPort!.postMessage(message);

// The server's (re)start comes first on a machine with few cores: this
// thread runs at a lower priority (Linux: nice is per thread)...
try {
  os.setPriority(Number(path.basename(readlinkSync('/proc/thread-self'))), 10);
} catch {
  // not Linux: same priority
}

// ... and while the dev loop (re)starts the server, a check due to start
// waits: TypeScript still records every file event, and schedules its
// update through the host's setTimeout, which runs it only once released.
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

let errors: TypeError[] = [];
let started = performance.now();

const toError = (diagnostic: ts.Diagnostic): TypeError => {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return { code: diagnostic.code, message };
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const file = path.relative(root, diagnostic.file.fileName).split(path.sep).join('/');
  return { file, line: line + 1, col: character + 1, code: diagnostic.code, message };
};

// Watch status codes: 6031 starting, 6032 file change detected, 6193/6194 found N errors.
const STARTING = new Set([6031, 6032]);
const FOUND = new Set([6193, 6194]);

const host = ts.createWatchCompilerHost(
  path.join(root, project),
  { noEmit: true, incremental: true, tsBuildInfoFile: buildInfo, pretty: false },
  ts.sys,
  ts.createEmitAndSemanticDiagnosticsBuilderProgram,
  (diagnostic) => {
    if (diagnostic.category === ts.DiagnosticCategory.Error) errors.push(toError(diagnostic));
  },
  (status) => {
    if (STARTING.has(status.code)) {
      errors = [];
      started = performance.now();
      post({ type: 'checking' });
    } else if (FOUND.has(status.code)) {
      post({ type: 'checked', errors, ms: performance.now() - started, files: projectFiles() });
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

let current: ts.EmitAndSemanticDiagnosticsBuilderProgram | undefined;
const afterProgramCreate = host.afterProgramCreate;
host.afterProgramCreate = (builder) => {
  current = builder;
  afterProgramCreate?.(builder);
};

/** The project's own files in the program (not the libraries' declarations). */
function projectFiles(): number {
  const program = current?.getProgram();
  if (!program) return 0;
  return program.getSourceFiles().filter((file) => !program.isSourceFileDefaultLibrary(file) && !program.isSourceFileFromExternalLibrary(file)).length;
}

ts.createWatchProgram(host);
