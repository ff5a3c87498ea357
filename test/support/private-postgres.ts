import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './http';

/**
 * A PostgreSQL server of the test's own (initdb in a temp folder), so a test
 * can crash and restart it without disturbing the shared test database.
 * PostgreSQL refuses to run as root, so it runs as the `postgres` user: this
 * needs root (as in CI) and Debian's postgresql package.
 */
export interface PrivatePostgres {
  url: string;
  /**
   * Kills the server without a clean shutdown (`pg_ctl stop -m immediate`),
   * keeps it down for `downMs`, then starts it: crash recovery from the WAL.
   */
  crashRestart(downMs: number): Promise<void>;
  stop(): void;
}

export function privatePostgresUnavailableReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (to run PostgreSQL as the postgres user)';
  if (binDir() === undefined) return "Debian's postgresql package is not installed";
  return undefined;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions.find((candidate) => existsSync(path.join(root, candidate, 'bin', 'initdb')));
  return version && path.join(root, version, 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pet-pg-'));
  const { uid, gid } = userIds('postgres');
  chownSync(dir, uid, gid);
  const data = path.join(dir, 'data');
  const asPostgres = (command: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args], { stdio: 'pipe', timeout: 60_000 });
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-instructions']);
  const port = await freePort();
  const ctlArgs = (...args: string[]) => [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-t',
    '30',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    ...args,
  ];
  const ctl = (...args: string[]) => asPostgres('pg_ctl', ctlArgs(...args));
  // Asynchronous, so the test's own requests keep flowing meanwhile.
  const ctlAsync = (...args: string[]) =>
    promisify(execFile)('runuser', ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), ...ctlArgs(...args)], { timeout: 60_000 });
  ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    crashRestart: async (downMs) => {
      await ctlAsync('stop', '-m', 'immediate');
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await ctlAsync('start');
    },
    stop: () => {
      try {
        ctl('stop', '-m', 'immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function userIds(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, name]).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}
