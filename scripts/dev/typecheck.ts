/**
 * Runs the type checker (typecheck-worker.ts) beside the server and prints
 * what it finds: every error with file, line and code as soon as a check
 * ends, a line when they are all fixed. A type error never stops or delays
 * the server: tsx runs the code regardless, and response validation (on in
 * development) catches at run time what the error breaks.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { event, took } from './log';
import type { CheckerControl, CheckerMessage, TypeError } from './typecheck-worker';

const MAX_SHOWN = 20;

function format(error: TypeError): string[] {
  const where = error.file ? `${error.file}:${error.line}:${error.col}` : 'tsconfig';
  const [first, ...rest] = error.message.split('\n');
  return [`${where}  TS${error.code}: ${first}`, ...rest.map((line) => `  ${line}`)];
}

const key = (errors: TypeError[]): string => JSON.stringify(errors);

export class TypeChecker {
  private worker: Worker | undefined;
  private last: TypeError[] | undefined;
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

  private report(message: CheckerMessage): void {
    if (message.type !== 'checked') return;
    const { errors, ms } = message;
    const previous = this.last;
    this.last = errors;
    if (errors.length === 0) {
      if (previous === undefined) event(`types: no errors (${message.files} files checked in ${took(ms)}; watching)`, 'ok');
      else if (previous.length > 0) event(`types: all fixed, no errors (${took(ms)})`, 'ok');
      else event(`types: no errors (${took(ms)})`, 'ok');
    } else if (previous !== undefined && key(previous) === key(errors)) {
      event(`types: still ${errors.length} error${errors.length === 1 ? '' : 's'} (${took(ms)})`, 'warn');
    } else {
      const shown = errors.slice(0, MAX_SHOWN).flatMap(format);
      if (errors.length > MAX_SHOWN) shown.push(`... and ${errors.length - MAX_SHOWN} more (npm run typecheck lists them all)`);
      const note = this.serverNote();
      event(`types: ${errors.length} error${errors.length === 1 ? '' : 's'} (${took(ms)})${note ? `; ${note}` : ''}`, 'error', shown);
    }
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
