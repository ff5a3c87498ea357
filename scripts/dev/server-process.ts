/**
 * The server of `npm run dev`: src/server.ts run by tsx (each file compiled
 * on load by esbuild and cached, so no `tsc` build first: types are checked
 * beside it, never in its way), restarted as a whole process on a change:
 * the database file, and so the keys, stay. Its output goes straight to the
 * terminal (the pretty log, in colour on a terminal); when it listens it
 * says so over IPC (scripts/dev/server-hooks.ts).
 *
 * A reload takes a process kept on standby with the libraries already
 * loaded (scripts/dev/server-entry.ts) and tells it to go; the next standby
 * is prepared once the server listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export type StartResult = { ok: true; url: string; ms: number } | { ok: false; code: number | null; signal: NodeJS.Signals | null };

const TSX = pathToFileURL(require.resolve('tsx')).href;
const HOOKS = pathToFileURL(path.join(__dirname, 'server-hooks.ts')).href;
const ENTRY = path.join(__dirname, 'server-entry.ts');

type Message = { type?: string; address?: string; port?: number };

interface Standby {
  child: ChildProcess;
  /** True once it has loaded the libraries and waits for "go"; false if it exited first. */
  ready: Promise<boolean>;
}

export class DevServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private standby: Standby | undefined;
  private closed = false;
  /** Called when the server exits while nobody asked it to (a crash). */
  onCrash: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};

  constructor(
    private readonly root: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly nodeFlags: readonly string[],
  ) {}

  /** Whether a server process is up (starting or listening). */
  get running(): boolean {
    return this.child !== undefined;
  }

  private spawnServer(goNow: boolean): ChildProcess {
    return spawn(process.execPath, ['--enable-source-maps', ...this.nodeFlags, '--import', TSX, '--import', HOOKS, ENTRY, path.join('src', 'server.ts')], {
      cwd: this.root,
      env: { ...this.env, DEV_SERVER_GO: goNow ? 'now' : 'on-message' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  private prepareStandby(): void {
    if (this.standby || this.closed) return;
    const child = this.spawnServer(false);
    const ready = new Promise<boolean>((resolve) => {
      child.on('message', (message: Message) => {
        if (message.type === 'standby') resolve(true);
      });
      child.once('exit', () => {
        if (this.standby?.child === child) this.standby = undefined;
        resolve(false);
      });
    });
    this.standby = { child, ready };
  }

  /** The standby process once it is ready (then it is no longer the standby), or a new process that starts at once. */
  private async takeProcess(): Promise<ChildProcess> {
    const standby = this.standby;
    this.standby = undefined;
    if (standby && (await standby.ready) && standby.child.connected) {
      standby.child.send({ type: 'go' });
      return standby.child;
    }
    standby?.child.kill('SIGKILL');
    return this.spawnServer(true);
  }

  /** Starts the server; resolves when it listens, or when it exits before that. */
  async start(): Promise<StartResult> {
    const started = performance.now();
    if (this.closed) return { ok: false, code: null, signal: 'SIGTERM' };
    const child = await this.takeProcess();
    if (this.closed) {
      child.kill('SIGTERM');
      return { ok: false, code: null, signal: 'SIGTERM' };
    }
    this.child = child;
    let listening = false;
    this.exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
    return new Promise<StartResult>((resolve) => {
      child.on('message', (message: Message) => {
        if (message.type !== 'listening' || listening) return;
        listening = true;
        const host =
          message.address === '::' || message.address === '0.0.0.0' ? '127.0.0.1' : message.address!.includes(':') ? `[${message.address}]` : message.address;
        resolve({ ok: true, url: `http://${host}:${message.port}`, ms: performance.now() - started });
        this.prepareStandby();
      });
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        const expected = this.child !== child;
        if (this.child === child) this.child = undefined;
        if (!listening) resolve({ ok: false, code, signal });
        else if (!expected) this.onCrash(code, signal);
      };
      if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
      else child.once('exit', onExit);
    });
  }

  /**
   * Stops the server (SIGTERM: in-flight requests finish, the database
   * closes) and resolves when it has exited; SIGKILL after `graceMs`.
   */
  async stop(graceMs = 5000): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return this.exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Stops the server and the standby for good. */
  async close(): Promise<void> {
    this.closed = true;
    const standby = this.standby;
    this.standby = undefined;
    standby?.child.kill('SIGTERM');
    await Promise.all([
      this.stop(),
      standby && standby.child.exitCode === null && standby.child.signalCode === null
        ? new Promise((resolve) => standby.child.once('exit', resolve))
        : undefined,
    ]);
  }

  /** Ends everything at once (a second Ctrl-C). */
  kill(): void {
    this.child?.kill('SIGKILL');
    this.standby?.child.kill('SIGKILL');
  }
}
