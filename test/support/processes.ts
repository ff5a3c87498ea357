import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from './paths';

/** The environment of a spawned process: this one's, minus its database/Redis choice, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _database, REDIS_URL: _redis, ...inherited } = process.env;
  // tsx reads tsconfig.json (whose paths lead to the engine's sources) from the working directory, which may be elsewhere.
  return { TSX_TSCONFIG_PATH: path.join(PROJECT_ROOT, 'tsconfig.json'), ...inherited, ...env };
}

/** Runs TypeScript sources directly, from any working directory. */
const TSX = ['--import', pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href];

export interface RunningServer {
  port: number;
  url: string;
  child: ChildProcess;
  /** Everything it printed, both streams interleaved. */
  output: () => string;
  /** Each stream on its own: stdout is the log stream, stderr what a person at the terminal reads. */
  stdout: () => string;
  stderr: () => string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real entry point (src/server.ts of `projectRoot`) on a free port
 * and waits until it listens. `nodeArgs` go to Node before the script (e.g. `--expose-gc`).
 */
export async function startServer(
  env: Record<string, string>,
  { nodeArgs = [], projectRoot = PROJECT_ROOT, args = [] }: { nodeArgs?: string[]; projectRoot?: string; args?: string[] } = {},
): Promise<RunningServer> {
  const child = spawn(process.execPath, [...nodeArgs, ...TSX, path.join(projectRoot, 'src/server.ts'), ...args], {
    cwd: env['CWD'] ?? projectRoot,
    env: childEnv({ NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  let exitSignal: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      exitSignal = signal;
      if (code !== 0) output += `\n[exit code ${code}, signal ${signal}]`;
      resolve(code);
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const check = (): void => {
      // JSON logs, or LOG_FORMAT=pretty's `port: 41234`.
      const match = /"port":(\d+)|\bport: (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1] ?? match[2]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      const code = await exited;
      if (code !== 0 && exitSignal !== 'SIGKILL') console.error(`server exited with ${code}:\n${output}`);
      return code;
    },
  };
}

/** Runs the keys CLI to completion. */
export function runKeysCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...TSX, path.join(PROJECT_ROOT, 'scripts/keys.ts'), ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the adoption invariant check (npm run check:adoption) to completion. */
export function runAdoptionCheck(env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...TSX, path.join(PROJECT_ROOT, 'scripts/check-adoption.ts')], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the keys CLI without blocking this process (the test can act while it runs); resolves when it exits. */
export function runKeysCliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX, path.join(PROJECT_ROOT, 'scripts/keys.ts'), ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs the server entry point (of `projectRoot`) expecting it to exit (e.g. on bad configuration). */
export function runServerToExit(env: Record<string, string>, projectRoot: string = PROJECT_ROOT): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [...TSX, path.join(projectRoot, 'src/server.ts')], {
    cwd: projectRoot,
    env: childEnv(env),
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}
