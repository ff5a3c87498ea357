/**
 * Runs the type checker (typecheck-worker.ts) beside the server and prints
 * what it finds: each new error with file, line and code as soon as its file
 * is checked, then one line per check (how many errors, how long, the older
 * ones still there), and a line when they are all fixed. A type error never
 * stops or delays the server: tsx runs the code regardless, and response
 * validation (on in development) catches at run time what the error breaks.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { event, took } from './log';
import type { CheckerControl, CheckerMessage, TypeCheckError } from './typecheck-worker';

const MAX_SHOWN = 20;

function format(error: TypeCheckError): string[] {
  const where = error.file ? `${error.file}:${error.line}:${error.col}` : 'tsconfig';
  const [first, ...rest] = error.message.split('\n');
  return [`${where}  TS${error.code}: ${first}`, ...rest.map((line) => `  ${line}`)];
}

const key = (error: TypeCheckError): string => `${error.file}:${error.line}:${error.col}:${error.code}:${error.message}`;

export class TypeChecker {
  private worker: Worker | undefined;
  /** The errors of the last complete check (undefined before the first). */
  private last: TypeCheckError[] | undefined;
  /** Errors printed and, as of the last check, still there. */
  private printed = new Set<string>();
  /** Errors printed during the check under way. */
  private printedNow = new Set<string>();
  /** What the server does meanwhile, said after the errors. */
  serverNote: () => string = () => '';

  constructor(
    private readonly root: string,
    private readonly project = 'tsconfig.json',
  ) {}

  start(): void {
    this.worker = new Worker(path.join(__dirname, 'typecheck-worker.ts'), {
      workerData: { root: this.root, project: this.project, buildInfo: path.join(this.root, 'dist', 'dev', 'typecheck.tsbuildinfo') },
      stdout: false,
      stderr: false,
    });
    this.worker.on('message', (message: CheckerMessage) => this.report(message));
    this.worker.on('error', (error) => event(`types: the type checker stopped: ${error.message} (the server is not affected)`, 'warn'));
  }

  /** Prints the errors not printed yet (in this check or an earlier one still showing them), as they come. */
  private printNew(errors: TypeCheckError[]): void {
    for (const error of errors) {
      const id = key(error);
      if (this.printed.has(id) || this.printedNow.has(id)) continue;
      this.printedNow.add(id);
      if (this.printedNow.size > MAX_SHOWN) continue;
      const [first, ...rest] = format(error);
      event(`types: ${first}`, 'error', rest);
    }
  }

  private report(message: CheckerMessage): void {
    if (message.type === 'checking') {
      this.printedNow = new Set();
      return;
    }
    if (message.type === 'found') {
      this.printNew(message.errors);
      return;
    }
    const { errors, ms } = message;
    this.printNew(errors);
    const previous = this.last;
    this.last = errors;
    const now = new Set(errors.map(key));
    const earlier = errors.filter((error) => this.printed.has(key(error)) && !this.printedNow.has(key(error)));
    const hidden = this.printedNow.size - Math.min(this.printedNow.size, MAX_SHOWN);
    this.printed = new Set([...this.printed, ...this.printedNow].filter((id) => now.has(id)));
    if (errors.length === 0) {
      if (previous === undefined) event(`types: no errors (${message.files} files checked in ${took(ms)}; watching)`, 'ok');
      else if (previous.length > 0) event(`types: all fixed, no errors (${took(ms)})`, 'ok');
      else event(`types: no errors (${took(ms)})`, 'ok');
      return;
    }
    const note = this.serverNote();
    const details = [
      ...(hidden > 0 ? [`${hidden} more not shown (npm run typecheck lists them all)`] : []),
      ...earlier.slice(0, MAX_SHOWN).map((error) => `still: ${format(error)[0]}`),
      ...(earlier.length > MAX_SHOWN ? [`still: ${earlier.length - MAX_SHOWN} more`] : []),
    ];
    event(`types: ${errors.length} error${errors.length === 1 ? '' : 's'} (${took(ms)})${note ? `; ${note}` : ''}`, 'error', details);
  }

  /** Holds the checks back (file events wait) while the server (re)starts. */
  hold(): void {
    this.worker?.postMessage('hold' satisfies CheckerControl);
  }

  /** Lets the held file events through. */
  release(): void {
    this.worker?.postMessage('release' satisfies CheckerControl);
  }

  async stop(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
